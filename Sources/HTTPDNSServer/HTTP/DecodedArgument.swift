/// What the service accepts as a percent-decoded query argument (name or value), the one rule
/// for plain and decrypted query strings: valid UTF-8 without a control character (bytes
/// 0x00–0x1F and 0x7F, NUL included). A value is never cut short at a NUL, and never read with
/// invalid UTF-8 replaced by U+FFFD (which would make two byte strings one text, and a client
/// signature over the bytes it sent fail against the text the service signs): an argument that
/// breaks the rule is refused, with a 400 `InvalidParameter` that names it (`refusal`).
enum DecodedArgument {
    /// Why an argument is refused.
    enum Problem: Equatable {
        case control(UInt8)
        case invalidUTF8
    }
    /// True for a byte no decoded argument may hold.
    @inline(__always)
    static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }

    /// The first control character of `bytes`, or nil.
    static func firstControl<Bytes: Sequence<UInt8>>(in bytes: Bytes) -> UInt8? {
        bytes.first(where: isControl)
    }

    /// What is wrong with `bytes` as a decoded argument (the first control character, else
    /// invalid UTF-8), or nil. It runs on every argument of every request (the fast path's
    /// included), so it reads eight bytes at a time (`flags`) and looks at single bytes only to
    /// name a control character or to check UTF-8 when some byte is 0x80 or above. Inlined: an
    /// argument of plain ASCII (nearly all of them) costs a few instructions and no call.
    @inline(__always)
    static func problem(in bytes: UnsafeRawBufferPointer) -> Problem? {
        let (control, high) = flags(bytes)
        guard control | high != 0 else { return nil }
        return problem(in: bytes, hasControl: control != 0)
    }

    /// The rest of `problem(in:)` for an argument with a control character or a byte from 0x80 up.
    @inline(never)
    private static func problem(in bytes: UnsafeRawBufferPointer, hasControl: Bool) -> Problem? {
        if hasControl, let first = firstControl(in: bytes) { return .control(first) }
        return isValidUTF8(bytes) ? nil : .invalidUTF8
    }

    /// True when `bytes` is acceptable (`problem(in:)` is nil).
    @inline(__always)
    static func isAcceptable(_ bytes: UnsafeRawBufferPointer) -> Bool { problem(in: bytes) == nil }

    /// The top bit of a byte, in each byte of a word.
    private static let topBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether some byte of `bytes` may be a control character (`control`, nonzero: then one is;
    /// the caller finds which) and whether some byte is 0x80 or above (`high`, nonzero), read a
    /// word at a time: words of eight bytes, the last one overlapping the one before it, and a
    /// shorter argument read as one word padded with spaces.
    @inline(__always)
    private static func flags(_ bytes: UnsafeRawBufferPointer) -> (control: UInt64, high: UInt64) {
        let count = bytes.count
        guard count >= 8 else { return wordFlags(shortWord(bytes)) }
        var control: UInt64 = 0
        var words: UInt64 = 0
        var offset = 0
        while true {
            // The last word ends at the last byte, overlapping its predecessor.
            let start = min(offset, count - 8)
            let word = bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self)
            control |= wordFlags(word).control
            words |= word
            offset += 8
            if offset >= count { break }
        }
        return (control, words & topBits)
    }

    /// `flags` of one word. A byte below 0x20 borrows into its top bit when 0x20 is taken
    /// from it, and 0x7F is the byte that XOR 0x7F makes 0 (which borrows when 1 is taken); a
    /// byte of 0x80 or above is masked out by its own top bit. A borrow can carry into the next
    /// byte up and flag it too, but only after a byte that was flagged itself: the word is
    /// flagged exactly when one of its bytes is a control character.
    @inline(__always)
    private static func wordFlags(_ word: UInt64) -> (control: UInt64, high: UInt64) {
        let below = (word &- 0x2020_2020_2020_2020) & ~word
        let delete = word ^ 0x7F7F_7F7F_7F7F_7F7F
        let isDelete = (delete &- 0x0101_0101_0101_0101) & ~delete
        return ((below | isDelete) & topBits, word & topBits)
    }

    /// Fewer than eight bytes as one word, the bytes missing made spaces (0x20: neither a
    /// control character nor 0x80 or above); bytes read twice where two loads overlap.
    @inline(__always)
    private static func shortWord(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        if count >= 4 {
            let first = UInt64(bytes.loadUnaligned(as: UInt32.self))
            return first | UInt64(bytes.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)) << 32
        }
        if count >= 2 {
            let first = UInt64(bytes.loadUnaligned(as: UInt16.self))
            return 0x2020_2020_0000_0000 | first | UInt64(bytes.loadUnaligned(fromByteOffset: count - 2, as: UInt16.self)) << 16
        }
        return count == 1 ? 0x2020_2020_2020_2000 | UInt64(bytes[0]) : 0x2020_2020_2020_2020
    }

    /// Well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF, no truncated
    /// sequence): table 3-7 of the Unicode Standard, which the standard library's decoder
    /// follows too; allocates nothing.
    static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        var index = 0
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            // The sequence's length and its second byte's range, which the lead byte decides.
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: (length, low) = (3, 0xA0)
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: (length, high) = (3, 0x9F)
            case 0xF0: (length, low) = (4, 0x90)
            case 0xF1...0xF3: length = 4
            case 0xF4: (length, high) = (4, 0x8F)
            default: return false
            }
            guard count - index >= length, (low...high).contains(bytes[index + 1]) else { return false }
            for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return false }
            index += length
        }
        return true
    }

    /// The same for any bytes.
    static func isValidUTF8<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        bytes.withContiguousStorageIfAvailable { isValidUTF8(UnsafeRawBufferPointer($0)) }
            ?? Array(bytes).withUnsafeBytes { isValidUTF8($0) }
    }

    /// `bytes` as text for a message: UTF-8 with each control character and `%` written `%XX`
    /// (and, when `bytes` is not valid UTF-8, every byte from 0x80 up too), so a message never
    /// carries the raw bytes.
    static func shown<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        let escapeHigh = !isValidUTF8(bytes)
        var output: [UInt8] = []
        for byte in bytes {
            if isControl(byte) || byte == UInt8(ascii: "%") || (escapeHigh && byte >= 0x80) {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigit(byte >> 4))
                output.append(hexDigit(byte & 0x0F))
            } else {
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The 400 for an argument named `name` (shown) whose name or value has `problem`.
    static func refusal(name: String, problem: Problem) -> APIError {
        switch problem {
        case .control(let control): refusal(name: name, control: control)
        case .invalidUTF8: APIError(.invalidParameter, "argument '\(name)' is not valid UTF-8 once percent-decoded")
        }
    }

    /// The 400 for an argument named `name` (its decoded bytes) whose name or value holds
    /// `control`.
    static func refusal(name: String, control: UInt8) -> APIError {
        APIError(
            .invalidParameter,
            "argument '\(name)' holds a control character (%\(String(decoding: [hexDigit(control >> 4), hexDigit(control & 0x0F)], as: UTF8.self)) once percent-decoded): arguments must not contain bytes 0x00-0x1F or 0x7F"
        )
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }
}
