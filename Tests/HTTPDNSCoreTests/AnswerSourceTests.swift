import Testing

@testable import HTTPDNSCore

@Suite struct AnswerSourceTests {
    /// How the store reads a row's `origin`: from its bytes, the same source as from the String.
    @Test(arguments: AnswerSource.allCases)
    func aSourceReadsBackFromTheBytesOfItsRawValue(source: AnswerSource) {
        var text = source.rawValue
        #expect(text.withUTF8 { AnswerSource(rawValue: $0) } == source)
    }

    @Test(arguments: ["", "upstrea", "upstreams", "Upstream", "cach", "rules", "shared "])
    func anyOtherBytesReadAsNoSource(text: String) {
        var text = text
        #expect(text.withUTF8 { AnswerSource(rawValue: $0) } == nil)
    }
}
