import Foundation

/// A JSON value for building test configs and reading response bodies.
///
/// Literal-buildable (`["accounts": ["default": ["upstreams": [url]]]]`) and Sendable;
/// accessors return nil when the value has another type.
public enum TestJSON: Sendable, Equatable, Codable, CustomStringConvertible,
    ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([TestJSON])
    case object([String: TestJSON])

    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: TestJSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, TestJSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// Parses JSON text (any top-level value).
    public init(parsing bytes: [UInt8]) throws {
        self = try JSONDecoder().decode(TestJSON.self, from: Data(bytes))
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([TestJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: TestJSON].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Compact JSON text with sorted keys; integral numbers print without a fraction.
    public func encoded() -> String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(let value):
            if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
            return String(value)
        case .string(let value): return TestJSON.quote(value)
        case .array(let values): return "[" + values.map { $0.encoded() }.joined(separator: ",") + "]"
        case .object(let members):
            return "{"
                + members.sorted { $0.key < $1.key }
                .map { TestJSON.quote($0.key) + ":" + $0.value.encoded() }
                .joined(separator: ",") + "}"
        }
    }

    public var description: String { encoded() }

    private static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Member `key` of an object.
    public subscript(key: String) -> TestJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// Element `index` of an array.
    public subscript(index: Int) -> TestJSON? {
        if case .array(let values) = self, values.indices.contains(index) { return values[index] }
        return nil
    }

    public var string: String? { if case .string(let value) = self { value } else { nil } }
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    public var double: Double? { if case .number(let value) = self { value } else { nil } }
    public var int: Int? {
        if case .number(let value) = self, value == value.rounded() { Int(value) } else { nil }
    }
    public var array: [TestJSON]? { if case .array(let value) = self { value } else { nil } }
    public var object: [String: TestJSON]? { if case .object(let value) = self { value } else { nil } }
    /// The strings of an array of strings (nil if any element is not a string).
    public var strings: [String]? {
        guard let values = array else { return nil }
        let strings = values.compactMap(\.string)
        return strings.count == values.count ? strings : nil
    }
    public var isNull: Bool { self == .null }
}
