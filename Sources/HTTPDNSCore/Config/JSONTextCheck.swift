/// Checks JSON text before `JSONSerialization` reads it, for what that reader lets pass or
/// reports badly: a syntax error is told with its line and column, and a key given twice in one
/// object (which the reader would silently resolve to its last value) is refused, named by its
/// key path (`accounts.shop.timeout`).
struct JSONTextCheck {
    /// Nesting deeper than this is refused (configuration and admin bodies are a few levels deep).
    static let maximumDepth = 64

    private let bytes: [UInt8]
    private var offset = 0
    /// The key path whose value's offset `position(ofValueAt:in:)` looks for, and where it was.
    private var target: String?
    private var found: [String: Int] = [:]

    /// A problem at a byte offset of the text; `key` is the key path for a duplicate key.
    struct Problem: Error {
        var offset: Int
        var message: String
        var key: String?
    }

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Nil when `bytes` are one well-formed JSON value with no key repeated in any object; else
    /// the problem, with its 1-based line and column (in characters of UTF-8 text).
    static func problem(in bytes: [UInt8]) -> (message: String, line: Int, column: Int, key: String?)? {
        var check = JSONTextCheck(bytes)
        do throws(Problem) {
            check.skipWhitespace()
            try check.value(path: "", depth: 0)
            check.skipWhitespace()
            if check.offset < bytes.count { throw Problem(offset: check.offset, message: "unexpected text after the JSON value") }
            return nil
        } catch {
            let (line, column) = position(of: error.offset, in: bytes)
            return (error.message, line, column, error.key)
        }
    }

    /// The 1-based line and column where the value at `keyPath` (`hostOverrides[0].hosts[1]`, as
    /// `ConfigError` names keys) begins in `bytes`, or where the closest enclosing value does
    /// when that one is absent (`domains.allow` when `domains` has no `allow`); nil when neither
    /// is there or the text is not well formed.
    static func position(ofValueAt keyPath: String, in bytes: [UInt8]) -> (line: Int, column: Int)? {
        var candidates: [String] = []
        var path = Substring(keyPath)
        while !path.isEmpty {
            candidates.append(String(path))
            guard let cut = path.lastIndex(where: { $0 == "." || $0 == "[" }) else { break }
            path = path[..<cut]
        }
        guard !candidates.isEmpty else { return nil }
        var check = JSONTextCheck(bytes)
        check.target = keyPath
        for candidate in candidates { check.found[candidate] = -1 }
        do throws(Problem) {
            check.skipWhitespace()
            try check.value(path: "", depth: 0)
        } catch {
            return nil
        }
        for candidate in candidates {
            if let offset = check.found[candidate], offset >= 0 { return position(of: offset, in: bytes) }
        }
        return nil
    }

    /// 1-based line and column of `offset`; columns count characters (UTF-8 continuation bytes
    /// are not counted).
    static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1, column = 1
        for byte in bytes[..<min(offset, bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    private var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { offset += 1 }
    }

    private func fail(_ message: String) -> Problem { Problem(offset: offset, message: message) }

    private func describeCurrent() -> String {
        guard let byte = current else { return "the end of the text" }
        return byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }

    private mutating func value(path: String, depth: Int) throws(Problem) {
        guard depth <= Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
        if target != nil, found[path] == -1 { found[path] = offset }
        switch current {
        case UInt8(ascii: "{"): try object(path: path, depth: depth)
        case UInt8(ascii: "["): try array(path: path, depth: depth)
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case let byte? where byte == UInt8(ascii: "-") || (byte >= 0x30 && byte <= 0x39): try number()
        default: throw fail("expected a JSON value, found \(describeCurrent())")
        }
    }

    private mutating func object(path: String, depth: Int) throws(Problem) {
        offset += 1
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            offset += 1
            return
        }
        var seen: Set<String> = []
        while true {
            guard current == UInt8(ascii: "\"") else { throw fail("expected a key in double quotes, found \(describeCurrent())") }
            let keyOffset = offset
            let key = try string()
            let keyPath = path.isEmpty ? key : "\(path).\(key)"
            guard seen.insert(key).inserted else {
                throw Problem(offset: keyOffset, message: "is given twice in the same object", key: keyPath)
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw fail("expected ':' after the key, found \(describeCurrent())") }
            offset += 1
            skipWhitespace()
            try value(path: keyPath, depth: depth + 1)
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                offset += 1
                skipWhitespace()
                continue
            }
            guard current == UInt8(ascii: "}") else { throw fail("expected ',' or '}', found \(describeCurrent())") }
            offset += 1
            return
        }
    }

    private mutating func array(path: String, depth: Int) throws(Problem) {
        offset += 1
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            offset += 1
            return
        }
        var index = 0
        while true {
            try value(path: "\(path)[\(index)]", depth: depth + 1)
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                offset += 1
                skipWhitespace()
                continue
            }
            guard current == UInt8(ascii: "]") else { throw fail("expected ',' or ']', found \(describeCurrent())") }
            offset += 1
            return
        }
    }

    /// A string starting at the opening quote; returns its decoded text.
    private mutating func string() throws(Problem) -> String {
        offset += 1
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flush() {
            if !raw.isEmpty { scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars) }
            raw.removeAll(keepingCapacity: true)
        }
        while true {
            guard let byte = current else { throw fail("a string is not closed") }
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush()
                offset += 1
                guard let escape = current else { throw fail("a string is not closed") }
                offset += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var unit = try hex4()
                    if (0xD800...0xDBFF).contains(unit), current == UInt8(ascii: "\\"),
                        offset + 1 < bytes.count, bytes[offset + 1] == UInt8(ascii: "u")
                    {
                        offset += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("a \\u escape pairs a high surrogate with no low one") }
                        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    }
                    scalars.append(Unicode.Scalar(unit) ?? "\u{FFFD}")
                default:
                    offset -= 1
                    throw fail("unknown escape '\\\(Character(Unicode.Scalar(escape)))' in a string")
                }
            case 0x00..<0x20:
                throw fail("a control character (byte 0x\(String(byte, radix: 16))) in a string must be escaped")
            default:
                raw.append(byte)
                offset += 1
            }
        }
    }

    private mutating func hex4() throws(Problem) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current, let digit = HexDigits.value(byte) else { throw fail("a \\u escape needs 4 hexadecimal digits") }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }

    private mutating func literal(_ word: StaticString) throws(Problem) {
        let length = word.utf8CodeUnitCount
        guard offset + length <= bytes.count,
            bytes[offset..<offset + length].elementsEqual(UnsafeBufferPointer(start: word.utf8Start, count: length))
        else {
            throw fail("expected a JSON value, found \(describeCurrent())")
        }
        offset += length
    }

    private mutating func number() throws(Problem) {
        func digits() -> Int {
            let start = offset
            while let byte = current, byte >= 0x30 && byte <= 0x39 { offset += 1 }
            return offset - start
        }
        if current == UInt8(ascii: "-") { offset += 1 }
        if current == UInt8(ascii: "0") {
            offset += 1
        } else if digits() == 0 {
            throw fail("a number needs digits")
        }
        if current == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw fail("a number needs digits after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            offset += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { offset += 1 }
            guard digits() > 0 else { throw fail("a number needs digits in its exponent") }
        }
    }
}
