/// A validated DNS host name: ASCII only (IDN must already be punycode), lower-cased, without the
/// trailing dot; at most 253 characters, labels of 1–63 letters, digits or hyphens that neither
/// start nor end with a hyphen (RFC 1035 / RFC 1123). Underscores are accepted inside labels
/// because service names (`_dmarc`, `_sip._tcp`) are looked up through HTTPDNS too.
public struct HostName: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let value: String

    /// Returns nil when `text` is not a valid host name. A name already in canonical form (lower
    /// case, no trailing dot) given as a `String` is kept as it is, without a copy.
    public init?(_ text: some StringProtocol) {
        let scan = text.utf8.withContiguousStorageIfAvailable(Self.scan) ?? Array(text.utf8).withUnsafeBufferPointer(Self.scan)
        guard scan.valid else { return nil }
        if scan.canonical {
            value = String(text)
            return
        }
        var bytes = Array(text.utf8)
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        for index in bytes.indices where bytes[index] >= UInt8(ascii: "A") && bytes[index] <= UInt8(ascii: "Z") {
            bytes[index] += 32
        }
        value = String(decoding: bytes, as: UTF8.self)
    }

    /// Checks the RFC 1035 / 1123 rules on the bytes of a name (one trailing dot allowed) and
    /// tells whether it is already canonical (no upper case, no trailing dot).
    private static func scan(_ input: UnsafeBufferPointer<UInt8>) -> (valid: Bool, canonical: Bool) {
        var bytes = input
        var canonical = true
        if bytes.last == UInt8(ascii: ".") {
            bytes = UnsafeBufferPointer(rebasing: bytes.dropLast())
            canonical = false
        }
        guard !bytes.isEmpty, bytes.count <= 253 else { return (false, false) }
        var labelLength = 0
        var previous = UInt8(ascii: ".")
        for var byte in bytes {
            if byte == UInt8(ascii: ".") {
                guard labelLength > 0, previous != UInt8(ascii: "-") else { return (false, false) }
                labelLength = 0
                previous = byte
                continue
            }
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") {
                byte += 32
                canonical = false
            }
            let isAlnum = (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            let isInner = byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            guard isAlnum || isInner else { return (false, false) }
            if byte == UInt8(ascii: "-") && labelLength == 0 { return (false, false) }
            labelLength += 1
            guard labelLength <= 63 else { return (false, false) }
            previous = byte
        }
        // A name may not end in an empty label ("example.com.." minus its root dot) or a hyphen.
        guard labelLength > 0, previous != UInt8(ascii: "-") else { return (false, false) }
        return (true, canonical)
    }

    public var description: String { value }

    public static func < (lhs: HostName, rhs: HostName) -> Bool { lhs.value < rhs.value }

    /// True when this name equals `suffix` or lies below it (`a.b.example.com` has suffix `example.com`).
    public func hasSuffix(_ suffix: HostName) -> Bool {
        value == suffix.value || value.hasSuffix("." + suffix.value)
    }
}
