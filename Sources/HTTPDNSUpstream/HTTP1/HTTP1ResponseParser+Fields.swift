#if canImport(Glibc)
    import Glibc
#endif

extension HTTP1ResponseParser.HeadFields {
    /// Takes what framing and connection fields say from one `Name: value` line (its line ending
    /// stripped: `count` bytes); every other field is only kept in the header block.
    mutating func read(_ line: UnsafeRawBufferPointer, count: Int) throws(HTTP1ResponseParser.Failure) {
        guard count > 0, let found = memchr(line.baseAddress!, Int32(UInt8(ascii: ":")), count) else { throw .badHeaderLine }
        let colon = UnsafeRawPointer(found) - line.baseAddress!
        guard colon > 0 else { throw .badHeaderLine }
        for index in 0..<colon where !Self.isTokenByte(line[index]) {
            // Whitespace before the colon or a folded line (RFC 9112 section 5.1 and 5.2).
            throw .badHeaderLine
        }
        var first = colon + 1
        var end = count
        while first < end && (line[first] == UInt8(ascii: " ") || line[first] == UInt8(ascii: "\t")) { first += 1 }
        while end > first && (line[end - 1] == UInt8(ascii: " ") || line[end - 1] == UInt8(ascii: "\t")) { end -= 1 }
        let name = UnsafeRawBufferPointer(rebasing: line[0..<colon])
        let value = UnsafeRawBufferPointer(rebasing: line[first..<end])
        if Self.equalsIgnoringCase(name, "content-length") {
            try readContentLength(value)
        } else if Self.equalsIgnoringCase(name, "transfer-encoding") {
            for coding in Self.tokens(value) {
                // Only a final `chunked` frames the body; any coding after it ends that.
                chunked = Self.equalsIgnoringCase(coding, "chunked")
                if !chunked { otherCoding = true }
            }
            if chunked { otherCoding = false }
        } else if Self.equalsIgnoringCase(name, "connection") {
            for option in Self.tokens(value) {
                if Self.equalsIgnoringCase(option, "close") { close = true }
                if Self.equalsIgnoringCase(option, "keep-alive") { keepAlive = true }
            }
        }
    }

    /// Digits only; a repeated field must repeat the same length (RFC 9110 section 8.6).
    private mutating func readContentLength(_ value: UnsafeRawBufferPointer) throws(HTTP1ResponseParser.Failure) {
        guard !value.isEmpty, value.count <= 18 else { throw .badContentLength }
        var length = 0
        for byte in value {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { throw .badContentLength }
            length = length * 10 + Int(byte - UInt8(ascii: "0"))
        }
        if let previous = contentLength, previous != length { throw .badContentLength }
        contentLength = length
    }

    /// The comma-separated elements of a list value, without the whitespace around them.
    private static func tokens(_ value: UnsafeRawBufferPointer) -> [UnsafeRawBufferPointer] {
        value.split(separator: UInt8(ascii: ",")).map { element in
            var first = element.startIndex
            var end = element.endIndex
            while first < end && (value[first] == UInt8(ascii: " ") || value[first] == UInt8(ascii: "\t")) { first += 1 }
            while end > first && (value[end - 1] == UInt8(ascii: " ") || value[end - 1] == UInt8(ascii: "\t")) { end -= 1 }
            return UnsafeRawBufferPointer(rebasing: value[first..<end])
        }
    }

    /// ASCII case-insensitive comparison with a lowercase literal.
    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let wanted = lowercase.utf8Start
        var offset = 0
        for byte in bytes {
            let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            if folded != wanted[offset] { return false }
            offset += 1
        }
        return true
    }

    /// `tchar` of RFC 9110 section 5.6.2.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
