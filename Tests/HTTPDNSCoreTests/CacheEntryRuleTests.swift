import HTTPDNSCore
import Testing

/// `ResolverEngine.entry(for:source:config:now:)`: the TTL an answer is cached with.
@Suite struct CacheEntryRuleTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let answer: UpstreamAnswer
        let source: AnswerSource
        let maxCacheTTL: UInt32
        let maxNegativeCache: UInt32
        let expectedTTL: UInt32

        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "positive keeps its TTL", answer: UpstreamAnswer(addresses: ["192.0.2.1"], ttl: 100), source: .upstream,
            maxCacheTTL: 3600, maxNegativeCache: 30, expectedTTL: 100),
        Case(
            name: "positive capped by maxCacheTTL", answer: UpstreamAnswer(addresses: ["192.0.2.1"], ttl: 5000), source: .upstream,
            maxCacheTTL: 3600, maxNegativeCache: 30, expectedTTL: 3600),
        Case(
            name: "positive without TTL gets 60", answer: UpstreamAnswer(addresses: ["192.0.2.1"], ttl: nil), source: .upstream,
            maxCacheTTL: 3600, maxNegativeCache: 30, expectedTTL: 60),
        Case(
            name: "positive TTL 0 stays 0", answer: UpstreamAnswer(addresses: ["192.0.2.1"], ttl: 0), source: .upstream, maxCacheTTL: 3600,
            maxNegativeCache: 30, expectedTTL: 0),
        Case(
            name: "system resolver ignores any TTL: 60", answer: UpstreamAnswer(addresses: ["192.0.2.1"], ttl: 900), source: .localdns,
            maxCacheTTL: 3600, maxNegativeCache: 30, expectedTTL: 60),
        Case(
            name: "system resolver 60 capped", answer: UpstreamAnswer(addresses: ["192.0.2.1"], ttl: nil), source: .localdns,
            maxCacheTTL: 20, maxNegativeCache: 30, expectedTTL: 20),
        Case(
            name: "NXDOMAIN without SOA gets maxNegativeCache", answer: UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true),
            source: .upstream, maxCacheTTL: 3600, maxNegativeCache: 30, expectedTTL: 30),
        Case(
            name: "NXDOMAIN SOA below cap kept", answer: UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true, negativeTTL: 10),
            source: .upstream, maxCacheTTL: 3600, maxNegativeCache: 30, expectedTTL: 10),
        Case(
            name: "NXDOMAIN SOA above cap capped", answer: UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true, negativeTTL: 900),
            source: .upstream, maxCacheTTL: 3600, maxNegativeCache: 30, expectedTTL: 30),
        Case(
            name: "NODATA with SOA", answer: UpstreamAnswer(addresses: [], ttl: nil, negativeTTL: 12), source: .upstream, maxCacheTTL: 3600,
            maxNegativeCache: 30, expectedTTL: 12),
        Case(
            name: "NODATA without TTL information is not cached", answer: UpstreamAnswer(addresses: [], ttl: nil), source: .upstream,
            maxCacheTTL: 3600, maxNegativeCache: 30, expectedTTL: 0),
        Case(
            name: "NODATA from the system resolver gets maxNegativeCache", answer: UpstreamAnswer(addresses: [], ttl: nil),
            source: .localdns, maxCacheTTL: 3600, maxNegativeCache: 30, expectedTTL: 30),
    ]

    @Test(arguments: cases)
    func answerBecomesAnEntryWithTheCappedTTL(_ testCase: Case) {
        var config = AccountConfig()
        config.maxCacheTTL = testCase.maxCacheTTL
        config.maxNegativeCache = testCase.maxNegativeCache
        let entry = ResolverEngine.entry(for: testCase.answer, source: testCase.source, config: config, now: 1000)
        #expect(entry.originTTL == testCase.expectedTTL)
        #expect(entry.storedAt == 1000)
        #expect(entry.addresses == testCase.answer.addresses)
        #expect(entry.nxdomain == testCase.answer.nxdomain)
        #expect(entry.origin == testCase.source)
    }
}
