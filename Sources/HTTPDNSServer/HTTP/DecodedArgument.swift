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
    /// invalid UTF-8), or nil. One pass over ASCII; the UTF-8 check runs only when a byte is
    /// 0x80 or above.
    static func problem<Bytes: Collection<UInt8>>(in bytes: Bytes) -> Problem? {
        var ascii = true
        for byte in bytes {
            if isControl(byte) { return .control(byte) }
            if byte >= 0x80 { ascii = false }
        }
        return ascii || isValidUTF8(bytes) ? nil : .invalidUTF8
    }

    /// True when `bytes` is acceptable (`problem(in:)` is nil).
    @inline(__always)
    static func isAcceptable<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool { problem(in: bytes) == nil }

    /// Well-formed UTF-8 by the standard library's decoder (no overlong forms, no surrogates,
    /// nothing above U+10FFFF, no truncated sequence); allocates nothing.
    static func isValidUTF8<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
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
