/// The value of a log field: text, or a number or boolean, which a JSON line writes as a JSON
/// number or `true`/`false` (not as a string) so that a log pipeline can compare and sum it.
/// A text line writes every value as its text.
public protocol LogValue: Sendable {
    /// The value as written in a text line, and in a JSON line when `isJSONLiteral`.
    var logText: String { get }
    /// Whether `logText` is a JSON literal (a number, `true` or `false`) written without quotes.
    var isJSONLiteral: Bool { get }
}

extension String: LogValue {
    public var logText: String { self }
    public var isJSONLiteral: Bool { false }
}

extension Int: LogValue {
    public var logText: String { String(self) }
    public var isJSONLiteral: Bool { true }
}

extension Double: LogValue {
    /// Swift's shortest round-trip form (`0.25`, `1.5e-05`) is JSON's number grammar; infinity
    /// and NaN have no JSON form and are written as strings.
    public var logText: String { "\(self)" }
    public var isJSONLiteral: Bool { isFinite }
}

extension Bool: LogValue {
    public var logText: String { self ? "true" : "false" }
    public var isJSONLiteral: Bool { true }
}
