/// A validated DNS host name: ASCII only (IDN must already be punycode), lower-cased, without the
/// trailing dot; at most 253 characters, labels of 1–63 letters, digits or hyphens that neither
/// start nor end with a hyphen (RFC 1035 / RFC 1123). Underscores are accepted inside labels
/// because service names (`_dmarc`, `_sip._tcp`) are looked up through HTTPDNS too.
public struct HostName: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let value: String

    /// The longest name in bytes, without its trailing dot.
    public static let maximumLength = 253

    /// Returns nil when `text` is not a valid host name. A name already in canonical form (lower
    /// case, no trailing dot) given as a `String` is kept as it is, without a copy.
    public init?(_ text: some StringProtocol) {
        let scan = text.utf8.withContiguousStorageIfAvailable(Self.scan) ?? Array(text.utf8).withUnsafeBufferPointer(Self.scan)
        guard scan.valid else { return nil }
        value = scan.canonical ? String(text) : Self.canonicalized(Array(text.utf8))
    }

    /// The same from bytes borrowed from a request (the fast path reads the query that way).
    public init?(utf8 text: UnsafeRawBufferPointer) {
        let bytes = text.assumingMemoryBound(to: UInt8.self)
        let scan = Self.scan(bytes)
        guard scan.valid else { return nil }
        value = scan.canonical ? String(decoding: bytes, as: UTF8.self) : Self.canonicalized(Array(bytes))
    }

    /// True when `bytes` are a valid name in canonical form (kept as they are by `init`).
    public static func isCanonical(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let scan = scan(bytes)
        return scan.valid && scan.canonical
    }

    /// A name already checked with `isCanonical`.
    package init(canonical bytes: UnsafeBufferPointer<UInt8>) {
        value = String(decoding: bytes, as: UTF8.self)
    }

    /// A valid name in canonical form: lower case, without its trailing dot.
    private static func canonicalized(_ name: [UInt8]) -> String {
        var bytes = name
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        for index in bytes.indices where bytes[index] >= UInt8(ascii: "A") && bytes[index] <= UInt8(ascii: "Z") {
            bytes[index] += 32
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// What a byte may be in a name (`byteClasses`).
    private enum ByteClass: UInt8 {
        case invalid = 0, inner, upper, hyphen, dot
    }

    /// The class of every byte value: letters, digits and `_` are `inner` (`upper` for A–Z).
    private static let byteClasses: [UInt8] = (0...255).map { (byte: Int) -> UInt8 in
        switch UInt8(byte) {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
            ByteClass.inner.rawValue
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): ByteClass.upper.rawValue
        case UInt8(ascii: "-"): ByteClass.hyphen.rawValue
        case UInt8(ascii: "."): ByteClass.dot.rawValue
        default: ByteClass.invalid.rawValue
        }
    }

    /// Checks the RFC 1035 / 1123 rules on the bytes of a name (one trailing dot allowed) and
    /// tells whether it is already canonical (no upper case, no trailing dot). One table lookup
    /// per byte, and a label's length is checked at its end: this runs on every request.
    private static func scan(_ input: UnsafeBufferPointer<UInt8>) -> (valid: Bool, canonical: Bool) {
        var bytes = input
        var canonical = true
        if bytes.last == UInt8(ascii: ".") {
            bytes = UnsafeBufferPointer(rebasing: bytes.dropLast())
            canonical = false
        }
        guard !bytes.isEmpty, bytes.count <= maximumLength else { return (false, false) }
        return byteClasses.withUnsafeBufferPointer { classes -> (valid: Bool, canonical: Bool) in
            let inner = ByteClass.inner.rawValue, hyphen = ByteClass.hyphen.rawValue
            var labelLength = 0
            var previous = ByteClass.dot.rawValue
            for byte in bytes {
                let kind = classes[Int(byte)]
                if kind != inner {
                    switch ByteClass(rawValue: kind) {
                    case .dot:
                        guard labelLength > 0, labelLength <= 63, previous != hyphen else { return (false, false) }
                        labelLength = 0
                        previous = kind
                        continue
                    case .hyphen:
                        guard labelLength > 0 else { return (false, false) }
                    case .upper:
                        canonical = false
                    default:
                        return (false, false)
                    }
                }
                labelLength += 1
                previous = kind
            }
            // A name may not end in an empty label ("example.com.." minus its root dot) or a hyphen.
            guard labelLength > 0, labelLength <= 63, previous != hyphen else { return (false, false) }
            return (true, canonical)
        }
    }

    public var description: String { value }

    public static func < (lhs: HostName, rhs: HostName) -> Bool { lhs.value < rhs.value }

    /// True when this name equals `suffix` or lies below it (`a.b.example.com` has suffix `example.com`).
    public func hasSuffix(_ suffix: HostName) -> Bool {
        value == suffix.value || value.hasSuffix("." + suffix.value)
    }
}
