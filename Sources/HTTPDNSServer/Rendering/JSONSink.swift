/// Where JSON bytes go: a growing array (`JSONWriter`) or memory sized beforehand (`ByteCursor`,
/// the fast path's). Answer writers are generic over it, so every answer format has one writer
/// whichever memory it lands in (specialised per sink at compile time: no dynamic dispatch).
protocol JSONSink {
    mutating func put(_ byte: UInt8)
    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>)
    mutating func put(_ text: StaticString)
    /// A number in decimal, at most `ByteCursor.maximumDecimal` bytes.
    mutating func decimal(_ value: UInt32)
    /// An IPv4 address held as a number (first octet in the high byte), dotted, at most
    /// `AddressList.maximumDottedQuad` bytes.
    mutating func ipv4(_ address: UInt32)
}

extension JSONSink {
    /// The most bytes `string` writes for `count` bytes of text: quotes plus six per byte
    /// (`\u00XX`), for a caller that sizes memory beforehand.
    static func maximumString(_ count: Int) -> Int { 2 + 6 * count }

    /// A JSON string literal with quotes; escapes `"`, `\` and control characters. Text that needs
    /// no escaping (host names, addresses: the common case) is copied in one go.
    mutating func string(_ utf8: UnsafeBufferPointer<UInt8>) {
        put(UInt8(ascii: "\""))
        if utf8.contains(where: Self.needsEscaping) {
            for byte in utf8 { escaped(byte) }
        } else {
            put(utf8)
        }
        put(UInt8(ascii: "\""))
    }

    mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { string($0) }
    }

    static func needsEscaping(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20
    }

    private mutating func escaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): put(#"\""#)
        case UInt8(ascii: "\\"): put(#"\\"#)
        case UInt8(ascii: "\n"): put(#"\n"#)
        case UInt8(ascii: "\r"): put(#"\r"#)
        case UInt8(ascii: "\t"): put(#"\t"#)
        case 0..<0x20:
            let hex: StaticString = "0123456789abcdef"
            put(#"\u00"#)
            put(hex.utf8Start[Int(byte >> 4)])
            put(hex.utf8Start[Int(byte & 15)])
        default: put(byte)
        }
    }
}
