/// A JSON value as ``JSONValue/read(_:)`` reads it from an upstream's body (RFC 8259).
///
/// Upstream answers are read on the curl loop thread for every miss, so this reader works on the
/// bytes directly: no Foundation, no bridging to `Any`, no copy of the body. Objects keep their
/// members in order; a name given twice reads as its last value, as Foundation's reader does.
enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number: `integer` when the literal has no fraction or exponent and fits in `Int`.
    case number(integer: Int?, double: Double)
    case string(String)
    case array([JSONValue])
    case object([(name: String, value: JSONValue)])

    /// Nesting deeper than this is refused (Foundation's reader refuses past 512 as well).
    static let maximumDepth = 512

    static func == (left: JSONValue, right: JSONValue) -> Bool {
        switch (left, right) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a, let x), .number(let b, let y)): return a == b && x == y
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.name == $1.name && $0.value == $1.value }
        default: return false
        }
    }

    /// The value of member `name` of an object (its last, when given twice); nil for a missing
    /// member or when this is not an object.
    subscript(name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.name == name }?.value
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var array: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    var isObject: Bool {
        if case .object = self { return true }
        return false
    }

    /// Reads one JSON text: any value at the top (RFC 8259), surrounded by whitespace only; nil
    /// for anything else (bad syntax, a trailing comma, invalid UTF-8, a lone surrogate escape, a
    /// number beyond `Double`'s range, nesting too deep).
    static func read(_ bytes: [UInt8]) -> JSONValue? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONByteReader(bytes: buffer)
            guard let value = reader.value(depth: 0) else { return nil }
            reader.skipWhitespace()
            return reader.index == buffer.count ? value : nil
        }
    }
}

/// The cursor ``JSONValue/read(_:)`` moves through the body; every method returns nil on the
/// first byte that does not fit the grammar.
private struct JSONByteReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) -> JSONValue? {
        skipWhitespace()
        guard index < bytes.count, depth < JSONValue.maximumDepth else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return object(depth: depth + 1)
        case UInt8(ascii: "["): return array(depth: depth + 1)
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return nil }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return nil }
        index += count
        return value
    }

    private mutating func object(depth: Int) -> JSONValue? {
        index += 1
        var members: [(name: String, value: JSONValue)] = []
        skipWhitespace()
        if consume(UInt8(ascii: "}")) { return .object(members) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let name = string() else { return nil }
            skipWhitespace()
            guard consume(UInt8(ascii: ":")), let value = value(depth: depth) else { return nil }
            members.append((name, value))
            skipWhitespace()
            if consume(UInt8(ascii: "}")) { return .object(members) }
            guard consume(UInt8(ascii: ",")) else { return nil }
        }
    }

    private mutating func array(depth: Int) -> JSONValue? {
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if consume(UInt8(ascii: "]")) { return .array(items) }
        while true {
            guard let item = value(depth: depth) else { return nil }
            items.append(item)
            skipWhitespace()
            if consume(UInt8(ascii: "]")) { return .array(items) }
            guard consume(UInt8(ascii: ",")) else { return nil }
        }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// A string from its opening quote. Without escapes the bytes become the string in one
    /// validated copy; with them, the text is rebuilt scalar by scalar.
    private mutating func string() -> String? {
        index += 1
        let start = index
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return String(validating: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                return escapedString(from: start)
            case 0x00..<0x20:
                return nil
            default:
                index += 1
            }
        }
        return nil
    }

    private mutating func escapedString(from start: Int) -> String? {
        guard var text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self) else {
            return nil
        }
        var runStart = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                guard let run = String(validating: UnsafeBufferPointer(rebasing: bytes[runStart..<index]), as: UTF8.self) else {
                    return nil
                }
                text += run
                index += 1
                if byte == UInt8(ascii: "\"") { return text }
                guard let scalar = escape() else { return nil }
                text.unicodeScalars.append(scalar)
                runStart = index
            } else if byte < 0x20 {
                return nil
            } else {
                index += 1
            }
        }
        return nil
    }

    /// The character of the escape after a backslash; a `\u` surrogate pair makes one scalar.
    private mutating func escape() -> Unicode.Scalar? {
        guard index < bytes.count else { return nil }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(byte)
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            guard let unit = hexUnit() else { return nil }
            guard (0xD800..<0xDC00).contains(unit) else { return Unicode.Scalar(unit) }
            guard consume(UInt8(ascii: "\\")), consume(UInt8(ascii: "u")), let low = hexUnit(), (0xDC00..<0xE000).contains(low)
            else { return nil }
            return Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00))
        default: return nil
        }
    }

    private mutating func hexUnit() -> UInt16? {
        guard bytes.count - index >= 4 else { return nil }
        var unit: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            unit = unit << 4 | UInt16(digit)
            index += 1
        }
        return unit
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, as RFC 8259 writes it.
    private mutating func number() -> JSONValue? {
        let start = index
        _ = consume(UInt8(ascii: "-"))
        let firstDigit = index
        guard digits() else { return nil }
        if bytes[firstDigit] == UInt8(ascii: "0"), index - firstDigit > 1 { return nil }  // no leading zero
        var whole = true
        if consume(UInt8(ascii: ".")) {
            whole = false
            guard digits() else { return nil }
        }
        if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
            whole = false
            if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
            guard digits() else { return nil }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { return nil }  // 1e400: beyond Double, refused
        return .number(integer: whole ? Int(text) : nil, double: double)
    }

    /// One or more decimal digits.
    private mutating func digits() -> Bool {
        let start = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        return index > start
    }
}
