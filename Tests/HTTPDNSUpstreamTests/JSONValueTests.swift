import Foundation
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSUpstream

/// `JSONValue.read` against RFC 8259, and against Foundation's reader on the fuzz corpora and
/// thousands of their mutations: both accept the same texts and read the same values.
struct JSONValueTests {
    private func read(_ text: String) -> JSONValue? { JSONValue.read(Array(text.utf8)) }

    @Test func valuesOfEveryKindAreRead() {
        let value = read(#" {"a":[1,-0.5,2e3,true,false,null],"b":"x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00","a":{}} "#)
        #expect(value?["a"] == .object([]))
        #expect(value?["b"]?.string == "x\"\\/\u{08}\u{0C}\n\r\t\u{E9}\u{1F600}")
        guard case .object(let members) = value, case .array(let items) = members[0].value else {
            Issue.record("not an object holding an array: \(String(describing: value))")
            return
        }
        #expect(
            items == [
                .number(integer: 1, double: 1), .number(integer: nil, double: -0.5), .number(integer: nil, double: 2000),
                .bool(true), .bool(false), .null,
            ])
        #expect(read("7") == .number(integer: 7, double: 7))
        #expect(read(#""é""#) == .string("é"))
        #expect(read("9223372036854775808") == .number(integer: nil, double: 9_223_372_036_854_775_808))
    }

    @Test(arguments: [
        "", " ", "{", "[1,]", "{\"a\":1,}", "01", "-", "1.", ".5", "1e", "+1", "tru", "nul", "[1 2]", "{\"a\" 1}",
        "{1:2}", "\"a", "\"\t\"", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\ud800\\u0041\"", "\"\\udc00\"",
        "[1] [2]", "NaN", "Infinity", "1e400", "-1e400", "// c\n1", "'a'",
    ])
    func textsOutsideTheGrammarAreRefused(text: String) {
        #expect(read(text) == nil)
    }

    @Test func invalidUTF8AndDeepNestingAreRefused() {
        #expect(JSONValue.read([0x22, 0xC3, 0x28, 0x22]) == nil)
        #expect(JSONValue.read([0x22, 0xFF, 0x22]) == nil)
        #expect(read(String(repeating: "[", count: 511) + String(repeating: "]", count: 511)) != nil)
        #expect(read(String(repeating: "[", count: 513) + String(repeating: "]", count: 513)) == nil)
    }

    @Test func foundationReadsTheSameValuesFromTheCorporaAndTheirMutations() throws {
        var generator = SplitMix64(seed: 0x5EED_2026_1205)
        var checked = 0
        var disagreements: [String] = []
        var trailingCommas = 0
        for text in try Self.corpus() {
            for round in 0..<400 {
                let bytes = round == 0 ? text : Self.mutate(text, &generator)
                checked += 1
                let ours = JSONValue.read(bytes).map(Shape.init)
                let foundation = (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])).map(Shape.init)
                if ours == nil, foundation != nil, Self.hasTrailingComma(bytes) {
                    trailingCommas += 1  // Foundation lets `[1,]` pass; RFC 8259 does not
                    continue
                }
                if ours != foundation, disagreements.count < 5 {
                    disagreements.append(
                        "\(String(decoding: bytes, as: UTF8.self)): ours \(String(describing: ours)), Foundation \(String(describing: foundation))"
                    )
                }
            }
        }
        #expect(checked > 4000)
        #expect(trailingCommas < checked / 20)
        #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
    }

    /// The doh-json and emas-json fuzz corpora, plus texts with escapes and numbers of each form.
    static func corpus() throws -> [[UInt8]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fuzz")
        var texts: [[UInt8]] = []
        for target in ["doh-json", "emas-json"] {
            let directory = root.appendingPathComponent(target).appendingPathComponent("corpus")
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() {
                texts.append(Array(try Data(contentsOf: directory.appendingPathComponent(name))))
            }
        }
        #expect(texts.count >= 10)
        texts.append(Array(#"{"s":"a\u00e9\ud83d\ude00\n\\","n":[0,-1,1.5,-2.25e-3,1E+2,123456789012]}"#.utf8))
        return texts
    }

    /// Whether a `,` is followed, after whitespace, by `]` or `}`.
    static func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
        let significant = bytes.filter { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return zip(significant, significant.dropFirst()).contains {
            $0 == UInt8(ascii: ",") && ($1 == UInt8(ascii: "]") || $1 == UInt8(ascii: "}"))
        }
    }

    /// One to three edits: a byte replaced by a JSON-significant one, deleted or inserted.
    static func mutate(_ text: [UInt8], _ generator: inout SplitMix64) -> [UInt8] {
        let alphabet = Array(#"{}[]:,"\\u0123456789.eE+-tfn aA"#.utf8) + [0x0A, 0x09, 0xC3, 0xFF]
        var bytes = text
        for _ in 0..<(1 + Int(generator.next() % 3)) where !bytes.isEmpty {
            let place = Int(generator.next() % UInt64(bytes.count))
            let byte = alphabet[Int(generator.next() % UInt64(alphabet.count))]
            switch generator.next() % 3 {
            case 0: bytes[place] = byte
            case 1: bytes.remove(at: place)
            default: bytes.insert(byte, at: place)
            }
        }
        return bytes
    }
}

/// A value as both readers can be compared on: numbers as doubles, equal within one part in
/// 10^15 (Foundation rounds integers of 20 digits and more a unit off in the last place; ours are
/// correctly rounded), objects as their names' last values.
private indirect enum Shape: Equatable, CustomStringConvertible {
    case null, bool(Bool), number(Double), string(String), array([Shape]), object([String: Shape])

    static func == (left: Shape, right: Shape) -> Bool {
        switch (left, right) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b || abs(a - b) <= 1e-15 * max(abs(a), abs(b))
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        default: return false
        }
    }

    init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .number(_, let double): self = .number(double)
        case .string(let text): self = .string(text)
        case .array(let items): self = .array(items.map(Shape.init))
        case .object(let members):
            self = .object(Dictionary(members.map { ($0.name, Shape($0.value)) }, uniquingKeysWith: { $1 }))
        }
    }

    init(_ value: Any) {
        switch value {
        case is NSNull: self = .null
        case let text as String: self = .string(text)
        case let items as [Any]: self = .array(items.map(Shape.init))
        case let object as [String: Any]: self = .object(object.mapValues(Shape.init))
        case let number as NSNumber:
            let isBool = String(cString: number.objCType) == "c"
            self = isBool ? .bool(number.boolValue) : .number(number.doubleValue)
        default: self = .string("unexpected \(type(of: value))")
        }
    }

    var description: String {
        switch self {
        case .null: return "null"
        case .bool(let flag): return "\(flag)"
        case .number(let value): return "\(value)"
        case .string(let text): return "\"\(text)\""
        case .array(let items): return "[\(items.map(\.description).joined(separator: ","))]"
        case .object(let object): return "{\(object.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ","))}"
        }
    }
}
