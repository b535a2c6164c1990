/// A validated DNS host name: ASCII only (IDN must already be punycode), lower-cased, without the
/// trailing dot; at most 253 characters, labels of 1–63 letters, digits or hyphens that neither
/// start nor end with a hyphen (RFC 1035 / RFC 1123). Underscores are accepted inside labels
/// because service names (`_dmarc`, `_sip._tcp`) are looked up through HTTPDNS too.
public struct HostName: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let value: String

    /// Returns nil when `text` is not a valid host name.
    public init?(_ text: some StringProtocol) {
        var bytes = Array(text.utf8)
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        guard !bytes.isEmpty, bytes.count <= 253 else { return nil }
        var labelLength = 0
        var previous: UInt8 = UInt8(ascii: ".")
        for index in bytes.indices {
            var byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                guard labelLength > 0, previous != UInt8(ascii: "-") else { return nil }
                labelLength = 0
                previous = byte
                continue
            }
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") {
                byte += 32
                bytes[index] = byte
            }
            let isAlnum = (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            let isInner = byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            guard isAlnum || isInner else { return nil }
            if byte == UInt8(ascii: "-") && labelLength == 0 { return nil }
            labelLength += 1
            guard labelLength <= 63 else { return nil }
            previous = byte
        }
        // A name may not end in an empty label ("example.com.." minus its root dot) or a hyphen.
        guard labelLength > 0, previous != UInt8(ascii: "-") else { return nil }
        value = String(decoding: bytes, as: UTF8.self)
    }

    public var description: String { value }

    public static func < (lhs: HostName, rhs: HostName) -> Bool { lhs.value < rhs.value }

    /// True when this name equals `suffix` or lies below it (`a.b.example.com` has suffix `example.com`).
    public func hasSuffix(_ suffix: HostName) -> Bool {
        value == suffix.value || value.hasSuffix("." + suffix.value)
    }
}
