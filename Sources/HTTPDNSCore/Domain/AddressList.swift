/// The addresses of one answer, as a cache entry keeps them.
///
/// Most answers are one to three IPv4 addresses. Those are kept inline as 32-bit numbers (16
/// bytes with the count), so that a cached entry needs no array and no string of its own: at a
/// million entries an `[String]` of two addresses was an 80-byte allocation each, and on a cache
/// hit it was one more cold object to retain. Anything else (IPv6, more addresses, text that is
/// not in canonical dotted-quad form) keeps its `[String]`. The text given is always the text
/// given back: an address is only packed when formatting the number reproduces it exactly.
///
/// The empty list of a negative answer may carry the SOA of the zone that gave it (RFC 2308 §3),
/// a reference in the room the addresses would take: an entry pays nothing for it, and copying
/// an answer (a cache hit) copies no more than a list without it.
public struct AddressList: Sendable, Hashable {
    private enum Storage: Sendable, Hashable {
        case ipv4(UInt32, UInt32, UInt32, count: UInt8)
        case text([String])
        case negative(NegativeAnswerSOA)
    }

    private var storage: Storage

    public static let maximumInline = 3

    public init(_ addresses: [String]) {
        storage = Self.packed(addresses) ?? .text(addresses)
    }

    /// No addresses, with the SOA of the negative answer's zone when there is one.
    public init(negativeWith soa: NegativeAnswerSOA?) {
        storage = soa.map { .negative($0) } ?? .text([])
    }

    /// This list carrying `soa` when it is empty (a negative answer's); a list with addresses, or
    /// no `soa`, gives the list as it is.
    public func carrying(_ soa: NegativeAnswerSOA?) -> AddressList {
        soa != nil && isEmpty ? AddressList(negativeWith: soa) : self
    }

    /// The SOA an empty list carries (`init(negativeWith:)`), nil otherwise.
    public var soa: NegativeAnswerSOA? {
        guard case .negative(let soa) = storage else { return nil }
        return soa
    }

    private static func packed(_ addresses: [String]) -> Storage? {
        guard !addresses.isEmpty, addresses.count <= maximumInline else { return nil }
        var numbers: (UInt32, UInt32, UInt32) = (0, 0, 0)
        for (index, text) in addresses.enumerated() {
            guard let number = canonicalIPv4(text) else { return nil }
            switch index {
            case 0: numbers.0 = number
            case 1: numbers.1 = number
            default: numbers.2 = number
            }
        }
        return .ipv4(numbers.0, numbers.1, numbers.2, count: UInt8(addresses.count))
    }

    /// Appends `address`, keeping the list as `init(_:)` of the same texts would: packed while it
    /// is one to three IPv4 addresses, text from then on. A reply's walk builds its list this way
    /// without a string per address. Appending to a negative list drops its SOA.
    public mutating func append(_ address: IPAddress) {
        if let number = address.ipv4 {
            switch storage {
            case .text(let texts) where texts.isEmpty:
                storage = .ipv4(number, 0, 0, count: 1)
                return
            case .negative:
                storage = .ipv4(number, 0, 0, count: 1)
                return
            case .ipv4(let first, _, _, count: 1):
                storage = .ipv4(first, number, 0, count: 2)
                return
            case .ipv4(let first, let second, _, count: 2):
                storage = .ipv4(first, second, number, count: 3)
                return
            default: break
            }
        }
        var texts = strings
        storage = .text([])
        texts.append(address.description)
        storage = .text(texts)
    }

    public var count: Int {
        switch storage {
        case .ipv4(_, _, _, let count): Int(count)
        case .text(let addresses): addresses.count
        case .negative: 0
        }
    }

    public var isEmpty: Bool { count == 0 }

    /// The addresses as text (an array built for the packed form).
    public var strings: [String] {
        switch storage {
        case .text(let addresses): return addresses
        case .negative: return []
        case .ipv4(let first, let second, let third, let count):
            return [first, second, third].prefix(Int(count)).map(Self.dottedQuad)
        }
    }

    /// Appends the list as the comma-separated text `init(commaSeparated:)` reads back, with no
    /// array of strings in between (a packed address's text is short enough to be kept inline).
    public func appendCommaSeparated(to bytes: inout [UInt8]) {
        if let packed = packedIPv4 {
            for index in 0..<packed.count {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.appendDottedQuad(packed[index], to: &bytes)
            }
        } else {
            for (index, address) in strings.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(contentsOf: address.utf8)
            }
        }
    }

    /// One to three IPv4 addresses as numbers (host byte order, first octet in the high byte).
    public struct PackedIPv4: Sendable {
        public let count: Int
        public let first: UInt32
        public let second: UInt32
        public let third: UInt32

        /// The address at `index` (0 ..< `count`).
        public subscript(index: Int) -> UInt32 { index == 0 ? first : index == 1 ? second : third }
    }

    /// The packed IPv4 addresses, or nil when the list is kept as text (`strings`).
    public var packedIPv4: PackedIPv4? {
        guard case .ipv4(let first, let second, let third, let count) = storage else { return nil }
        return PackedIPv4(count: Int(count), first: first, second: second, third: third)
    }

    /// The list stored as comma-separated text (the persisted form; empty parts are skipped):
    /// the same list as `init(_:)` of the parts, without a string for each part when they pack.
    public init(commaSeparated text: UnsafeBufferPointer<UInt8>) {
        if let packed = Self.packed(commaSeparated: text) {
            self.init(storage: packed)
        } else {
            self.init(text.split(separator: UInt8(ascii: ",")).map { String(decoding: $0, as: UTF8.self) })
        }
    }

    /// The packed form of comma-separated text (empty parts skipped) when its parts pack, found
    /// in one pass without allocating: a warm load reads a million of these.
    private static func packed(commaSeparated text: UnsafeBufferPointer<UInt8>) -> Storage? {
        var numbers: (UInt32, UInt32, UInt32) = (0, 0, 0)
        var count = 0
        var start = 0
        while start < text.count {
            var end = start
            while end < text.count && text[end] != UInt8(ascii: ",") { end += 1 }
            if end > start {
                guard count < maximumInline, let number = canonicalIPv4(UnsafeBufferPointer(rebasing: text[start..<end])) else {
                    return nil
                }
                switch count {
                case 0: numbers.0 = number
                case 1: numbers.1 = number
                default: numbers.2 = number
                }
                count += 1
            }
            start = end + 1
        }
        return count == 0 ? nil : .ipv4(numbers.0, numbers.1, numbers.2, count: UInt8(count))
    }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// The number of `text` when it is an IPv4 address in canonical dotted-quad form (four
    /// decimal octets, no leading zero, no sign, nothing else), else nil.
    static func canonicalIPv4(_ text: String) -> UInt32? {
        var text = text
        return text.withUTF8 { canonicalIPv4($0) }
    }

    /// The same for the address's bytes.
    static func canonicalIPv4(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32? {
        guard bytes.count >= 7, bytes.count <= 15 else { return nil }
        var value: UInt32 = 0
        var octet: UInt32 = 0
        var digits = 0
        var dots = 0
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, dots < 3 else { return nil }
                value = value << 8 | octet
                octet = 0
                digits = 0
                dots += 1
            } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                // "0" alone is an octet; "01" is not canonical.
                guard digits < 3, !(digits == 1 && octet == 0) else { return nil }
                octet = octet * 10 + UInt32(byte - UInt8(ascii: "0"))
                guard octet <= 255 else { return nil }
                digits += 1
            } else {
                return nil
            }
        }
        guard dots == 3, digits > 0 else { return nil }
        return value << 8 | octet
    }

    /// The most bytes an IPv4 address takes as text (`255.255.255.255`).
    public static let maximumDottedQuad = 15

    /// `number` as `a.b.c.d`, in a string of at most 15 bytes, which Swift keeps inline: no
    /// allocation, where interpolation cost about 2 000 instructions.
    static func dottedQuad(_ number: UInt32) -> String {
        String(unsafeUninitializedCapacity: maximumDottedQuad) { writeDottedQuad(number, into: $0) }
    }

    /// Appends `number` as `a.b.c.d` to `bytes`, with no string in between.
    public static func appendDottedQuad(_ number: UInt32, to bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumDottedQuad) { buffer in
            let length = writeDottedQuad(number, into: buffer)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<length]))
        }
    }

    /// Writes `number` (first octet in the high byte) as `a.b.c.d` into `buffer`, which has room
    /// for `maximumDottedQuad` bytes; returns the length written. The one formatter of a packed
    /// address: answers, stored rows, the shared tier's values and `strings` all use it. Each
    /// octet's digits come from a table and are written whole (three bytes, the unused ones
    /// overwritten or past the length), with no division.
    public static func writeDottedQuad(_ number: UInt32, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(buffer.count >= maximumDottedQuad, "AddressList.writeDottedQuad: a buffer under 15 bytes")
        return octetTexts.withUnsafeBufferPointer { table in
            let start = buffer.baseAddress!
            var next = start
            for shift in stride(from: UInt32(24), through: 0, by: -8) {
                let packed = table[Int(number >> shift & 0xff)]
                next[0] = UInt8(truncatingIfNeeded: packed)
                next[1] = UInt8(truncatingIfNeeded: packed >> 8)
                next[2] = UInt8(truncatingIfNeeded: packed >> 16)
                next += Int(packed >> 24)
                if shift > 0 {
                    next[0] = UInt8(ascii: ".")
                    next += 1
                }
            }
            return next - start
        }
    }

    /// The decimal text of every octet value, packed: its length in the top byte, its digits in
    /// the low bytes, first digit lowest.
    private static let octetTexts: [UInt32] = (0...255).map { value in
        let digits = Array(String(value).utf8)
        return digits.enumerated().reduce(UInt32(digits.count) << 24) { $0 | UInt32($1.element) << (8 * $1.offset) }
    }
}

extension AddressList: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: String...) {
        self.init(elements)
    }
}
