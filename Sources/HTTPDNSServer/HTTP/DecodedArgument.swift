/// What the service accepts as a percent-decoded query argument (name or value), the one rule
/// for plain and decrypted query strings: no control character (bytes 0x00–0x1F and 0x7F, NUL
/// included). A value is never cut short at a NUL: an argument with one is refused, with a 400
/// `InvalidParameter` that names it (`refusal`).
enum DecodedArgument {
    /// True for a byte no decoded argument may hold.
    @inline(__always)
    static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }

    /// The first control character of `bytes`, or nil.
    static func firstControl<Bytes: Sequence<UInt8>>(in bytes: Bytes) -> UInt8? {
        bytes.first(where: isControl)
    }

    /// `bytes` as text for a message: UTF-8 (invalid sequences replaced), each control
    /// character and `%` written `%XX`, so a message never carries the raw bytes.
    static func shown<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var output: [UInt8] = []
        for byte in bytes {
            if isControl(byte) || byte == UInt8(ascii: "%") {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigit(byte >> 4))
                output.append(hexDigit(byte & 0x0F))
            } else {
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The 400 for an argument named `name` (its decoded bytes) whose name or value holds
    /// `control`.
    static func refusal(name: String, control: UInt8) -> APIError {
        APIError(
            .invalidParameter,
            "argument '\(name)' holds a control character (%\(String(decoding: [hexDigit(control >> 4), hexDigit(control & 0x0F)], as: UTF8.self)) once percent-decoded): arguments must not contain bytes 0x00-0x1F or 0x7F")
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }
}
