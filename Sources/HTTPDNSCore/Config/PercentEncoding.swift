/// RFC 3986 percent-encoding, one way: the unreserved bytes (`A-Z a-z 0-9 - . _ ~`) stay, every
/// other byte of the UTF-8 becomes `%XX` with upper-case hex. Used for the query strings sent to
/// upstreams and for the canonical string of client signatures, which must agree byte for byte
/// with what clients compute (docs/security.md).
public enum PercentEncoding {
    /// `text` encoded; with `keepingSlash`, `/` stays too (for paths).
    public static func encode(_ text: String, keepingSlash: Bool = false) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        append(text, keepingSlash: keepingSlash, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends `text` encoded (the bytes of `encode(text)`) to `output`, without a string of its own.
    public static func append(_ text: String, keepingSlash: Bool = false, to output: inout [UInt8]) {
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigit(byte >> 4))
                output.append(hexDigit(byte & 0x0F))
            }
        }
    }

    /// Writes `bytes` encoded (as `append` does) at `output`, which has room for three bytes for
    /// each of them; returns how many it wrote. For a writer with a buffer of its own.
    public static func write(_ bytes: UnsafeRawBufferPointer, keepingSlash: Bool = false, to output: UnsafeMutablePointer<UInt8>) -> Int {
        var count = 0
        for byte in bytes {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                output[count] = byte
                count += 1
            } else {
                output[count] = UInt8(ascii: "%")
                output[count + 1] = hexDigit(byte >> 4)
                output[count + 2] = hexDigit(byte & 0x0F)
                count += 3
            }
        }
        return count
    }

    /// Whether `encode(lhs)` sorts before `encode(rhs)` byte by byte, found without encoding
    /// either (the order of encoded names is not the order of the names: `:` sorts after `0`,
    /// `%3A` before it).
    public static func encodedPrecedes(_ lhs: String, _ rhs: String) -> Bool {
        var left = EncodedBytes(lhs.utf8.makeIterator()), right = EncodedBytes(rhs.utf8.makeIterator())
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return false
            case (nil, _): return true
            case (_, nil): return false
            case let (l?, r?): if l != r { return l < r }
            }
        }
    }

    /// The bytes of `encode(text)` one at a time.
    private struct EncodedBytes {
        var base: String.UTF8View.Iterator
        /// The hex digits of the last escaped byte (high, then low) and how many are still to give.
        var pending: (UInt8, UInt8) = (0, 0)
        var pendingCount = 0

        init(_ base: String.UTF8View.Iterator) { self.base = base }

        mutating func next() -> UInt8? {
            if pendingCount == 2 {
                pendingCount = 1
                return pending.0
            }
            if pendingCount == 1 {
                pendingCount = 0
                return pending.1
            }
            guard let byte = base.next() else { return nil }
            if isUnreserved(byte) { return byte }
            pending = (hexDigit(byte >> 4), hexDigit(byte & 0x0F))
            pendingCount = 2
            return UInt8(ascii: "%")
        }
    }

    /// The upper-case hex digit of `nibble` (0-15).
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }

    /// Whether `byte` is one of RFC 3986's unreserved characters.
    public static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
