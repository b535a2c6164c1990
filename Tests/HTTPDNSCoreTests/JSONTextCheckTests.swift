import Testing

@testable import HTTPDNSCore

/// The check `parseJSONObject` runs before decoding (its faults, with line and column, are
/// pinned through the config file in ConfigValidationTests).
@Suite struct JSONTextCheckTests {
    @Test func wellFormedJSONPassesTheTextCheck() {
        let texts = [
            #"{"a": [1, -2.5e+3, 0, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"], "b": {}, "c": []}"#,
            "  {\"a\" : { \"b\" : [ [ ] ] } }\n",
        ]
        for text in texts { #expect(JSONTextCheck.problem(in: Array(text.utf8)) == nil, "\(text)") }
    }
}
