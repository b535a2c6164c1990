/// base64url without padding (RFC 4648 §5): RFC 8484 `GET ?dns=` queries towards upstreams and
/// the `enc` argument of encrypted client requests. Written directly: Foundation's base64 plus
/// two `replacingOccurrences` went through NSString searches on every upstream query (about 1 %
/// of the process's time on misses).
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { encode($0, after: []) }
    }

    /// `prefix` followed by the encoding of `bytes`, written into the string in one pass (an
    /// upstream query's URL: the endpoint, `?dns=`, the message).
    public static func encode(_ bytes: UnsafeBufferPointer<UInt8>, after prefix: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: prefix.count + (bytes.count * 4 + 2) / 3) { output in
            _ = output.initialize(fromContentsOf: prefix)
            return alphabet.withUnsafeBufferPointer { encode(bytes, into: output, at: prefix.count, alphabet: $0) }
        }
    }

    /// Writes the encoding of `bytes` into `output` from `start`; returns where it ends.
    private static func encode(
        _ bytes: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>, at start: Int,
        alphabet: UnsafeBufferPointer<UInt8>
    ) -> Int {
        var written = start
        var index = 0
        while index < bytes.count {
            let first = UInt32(bytes[index])
            let second = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
            let third = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
            let group = first << 16 | second << 8 | third
            // 2, 3 or 4 characters for 1, 2 or 3 input bytes (no padding).
            let characters = min(4, (bytes.count - index) + 1)
            for position in 0..<characters {
                output[written] = alphabet[Int(group >> UInt32(18 - 6 * position) & 0x3F)]
                written += 1
            }
            index += 3
        }
        return written
    }

    /// The bytes `text` encodes, or nil unless it is canonical unpadded base64url: only the
    /// characters `A-Z a-z 0-9 - _`, no `=`, no whitespace, a length that is not 1 more than a
    /// multiple of 4, and zero bits where a last partial group has unused bits (so every byte
    /// string has exactly one accepted encoding).
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var text = String(text)
        return text.withUTF8 { characters in
            var failed = false
            let bytes = [UInt8](unsafeUninitializedCapacity: decodedCapacity(characters.count)) { buffer, count in
                guard let written = decode(UnsafeRawBufferPointer(characters), into: UnsafeMutableRawBufferPointer(buffer)) else {
                    failed = true
                    count = 0
                    return
                }
                count = written
            }
            return failed ? nil : bytes
        }
    }

    /// The most bytes `count` characters of base64url decode to.
    public static func decodedCapacity(_ count: Int) -> Int { count / 4 * 3 + 2 }

    /// Decodes the characters `text` (as `decode(_:)` accepts them) into `output`, which must
    /// hold `decodedCapacity(text.count)` bytes; returns how many it wrote, or nil when `text`
    /// is not canonical unpadded base64url (what was written is then meaningless).
    public static func decode(_ text: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int? {
        guard text.count % 4 != 1 else { return nil }
        precondition(output.count >= decodedCapacity(text.count), "Base64URL.decode: output too small")
        return sextets.withUnsafeBufferPointer { sextets in
            // Any character outside the alphabet has the bit 0x40 set in `sextets`: collected
            // in `invalid` and checked once at the end.
            var invalid: UInt8 = 0
            func value(_ index: Int) -> UInt32 {
                let value = sextets[Int(text[index])]
                invalid |= value
                return UInt32(value & 0x3F)
            }
            var written = 0
            var index = 0
            // Whole groups: four characters, three bytes.
            let whole = text.count / 4 * 4
            while index < whole {
                let group = value(index) << 18 | value(index + 1) << 12 | value(index + 2) << 6 | value(index + 3)
                output[written] = UInt8(truncatingIfNeeded: group >> 16)
                output[written + 1] = UInt8(truncatingIfNeeded: group >> 8)
                output[written + 2] = UInt8(truncatingIfNeeded: group)
                written += 3
                index += 4
            }
            switch text.count - whole {
            case 2:  // 12 bits: one byte and 4 unused bits
                let group = value(index) << 6 | value(index + 1)
                guard group & 0x0F == 0 else { return nil }
                output[written] = UInt8(truncatingIfNeeded: group >> 4)
                written += 1
            case 3:  // 18 bits: two bytes and 2 unused bits
                let group = value(index) << 12 | value(index + 1) << 6 | value(index + 2)
                guard group & 0x03 == 0 else { return nil }
                output[written] = UInt8(truncatingIfNeeded: group >> 10)
                output[written + 1] = UInt8(truncatingIfNeeded: group >> 2)
                written += 2
            default:
                break
            }
            guard invalid & 0x40 == 0 else { return nil }
            return written
        }
    }

    /// The value of each byte as a base64url character, 0x40 for a byte that is none (one
    /// lookup a character: the ranges compared one by one took about 18 instructions each).
    private static let sextets: [UInt8] = {
        var table = [UInt8](repeating: 0x40, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()
}
