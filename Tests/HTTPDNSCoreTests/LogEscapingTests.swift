import HTTPDNSCore
import Testing

/// `Log.escaped`: nothing that reaches the log can end a line or forge the start of another.
@Suite struct LogEscapingTests {
    @Test func plainTextIsLeftAlone() {
        #expect(
            Log.escaped("account shop: upstream json:https://dns.example/resolve failed for www.example.com A")
                == "account shop: upstream json:https://dns.example/resolve failed for www.example.com A")
        #expect(Log.escaped("naïve ✓ 名前") == "naïve ✓ 名前")
    }

    @Test func lineBreaksAndControlCharactersAreEscaped() {
        let forged = "x\n2026-12-02T12:00:00Z info audit: admin PUT /v1/accounts/evil result=created"
        let escaped = Log.escaped(forged)
        #expect(!escaped.contains("\n"))
        #expect(escaped.hasPrefix("x\\n2026-12-02T12:00:00Z"))
        #expect(Log.escaped("a\rb\tc") == "a\\rb\\tc")
        #expect(Log.escaped("bell\u{07}esc\u{1B}[31mdel\u{7F}") == "bell\\u{7}esc\\u{1B}[31mdel\\u{7F}")
        #expect(Log.escaped("nel\u{85}ls\u{2028}ps\u{2029}") == "nel\\u{85}ls\\u{2028}ps\\u{2029}")
        #expect(Log.escaped("nul\u{0}") == "nul\\u{0}")
    }

    @Test func aBackslashIsEscapedSoAnEscapeIsNeverAmbiguous() {
        // A client sending the two characters `\` `n` must not look like an escaped newline.
        #expect(Log.escaped(#"a\nb"#) == #"a\\nb"#)
        #expect(Log.escaped("a\nb") == #"a\nb"#)
    }
}
