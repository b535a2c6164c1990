import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// The SDK-shaped statistics record, fed by real resolutions.
@Suite struct StatisticsTests {
    private let key = StatsKey(domain: "www.example.com", family: .a, network: "default")

    private func record(_ fixture: EngineFixture, _ key: StatsKey? = nil) -> DomainStats {
        fixture.engine.stats.record(key ?? self.key) ?? DomainStats()
    }

    @Test func upstreamAnswerCountsOneRequestAndOneSuccess() {
        let fixture = EngineFixture()
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        _ = fixture.resolve("www.example.com")
        let stats = record(fixture)
        #expect(stats.requestPDnsNum == 1)
        #expect(stats.successNum == 1)
        #expect(stats.cacheDnsNum == 0)
        #expect(stats.gobackLocaldnsNum == 0)
    }

    @Test func cacheHitCountsCacheDnsNumOnly() {
        let fixture = EngineFixture()
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        _ = fixture.resolve("www.example.com")
        _ = fixture.resolve("www.example.com")
        _ = fixture.resolve("www.example.com")
        let stats = record(fixture)
        #expect(stats.cacheDnsNum == 2)
        #expect(stats.requestPDnsNum == 1)
        #expect(stats.successNum == 1)
    }

    @Test(arguments: [UpstreamError.Code.timeout, .permission, .badRequest, .notFound, .transport, .httpStatus, .malformed, .serverFailure])
    func eachUpstreamErrorFeedsItsCounter(_ code: UpstreamError.Code) {
        let fixture = EngineFixture(config: .test { $0.localDNSFallback = false })
        fixture.upstream.setFailure("www.example.com", .a, code)
        _ = fixture.resolve("www.example.com")

        var expected = DomainStats()
        expected.requestPDnsNum = 1
        switch code {
        case .timeout: expected.timeoutErro = 1
        case .permission: expected.noPermissionErro = 1
        case .badRequest: expected.urlParameterErro = 1
        case .notFound: expected.urlPathErro = 1
        case .transport, .httpStatus, .malformed, .serverFailure: expected.noResponseErro = 1
        }
        #expect(record(fixture) == expected)
    }

    @Test func everyUpstreamAttemptIsCountedAsARequest() {
        let fixture = EngineFixture(upstreamCount: 3)
        fixture.upstreams[0].setFailure("www.example.com", .a, .timeout)
        fixture.upstreams[1].setFailure("www.example.com", .a, .notFound)
        fixture.upstreams[2].setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        _ = fixture.resolve("www.example.com")
        let stats = record(fixture)
        #expect(stats.requestPDnsNum == 3)
        #expect(stats.timeoutErro == 1)
        #expect(stats.urlPathErro == 1)
        #expect(stats.successNum == 1)
    }

    @Test func fallbackAnswerCountsGobackLocaldnsAndSuccess() {
        let fixture = EngineFixture()
        fixture.upstream.setFailure("www.example.com", .a, .transport)
        fixture.fallback.setAnswer("www.example.com", addresses: ["192.0.2.53"], ttl: nil)
        _ = fixture.resolve("www.example.com")
        let stats = record(fixture)
        #expect(stats.gobackLocaldnsNum == 1)
        #expect(stats.localErro == 0)
        #expect(stats.successNum == 1)
        #expect(stats.noResponseErro == 1)
        #expect(stats.requestPDnsNum == 1)
    }

    @Test func fallbackFailureCountsLocalErro() {
        let fixture = EngineFixture()
        fixture.upstream.setFailure("www.example.com", .a, .transport)
        fixture.fallback.setFailure("www.example.com", .a, .timeout)
        _ = fixture.resolve("www.example.com")
        let stats = record(fixture)
        #expect(stats.gobackLocaldnsNum == 1)
        #expect(stats.localErro == 1)
        #expect(stats.successNum == 0)
    }

    @Test func roundTripTimesAreAveragedAndMaximisedInWholeMilliseconds() {
        let fixture = EngineFixture(config: .test { $0.cacheEnable = false })
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        fixture.upstream.setReplyDelay(0.1)
        _ = fixture.resolve("www.example.com")
        fixture.upstream.setReplyDelay(0.3004)
        _ = fixture.resolve("www.example.com")

        let stats = record(fixture)
        #expect(stats.avgRtt == "200")
        #expect(stats.maxRtt == "300")
        #expect(stats.rttCount == 2)
    }

    @Test func roundTripTimeCoversEveryAttemptOfTheResolution() {
        let fixture = EngineFixture(upstreamCount: 2)
        fixture.upstreams[0].setFailure("www.example.com", .a, .timeout)
        fixture.upstreams[0].setReplyDelay(1.0)
        fixture.upstreams[1].setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        fixture.upstreams[1].setReplyDelay(0.25)
        _ = fixture.resolve("www.example.com")
        #expect(record(fixture).avgRtt == "1250")
        #expect(record(fixture).maxRtt == "1250")
    }

    @Test func noRoundTripTimeIsRecordedBeforeTheFirstAnswer() {
        let stats = DomainStats()
        #expect(stats.avgRtt == "0")
        #expect(stats.maxRtt == "0")
    }

    @Test func recordsAreKeptPerFamilyAndNetwork() {
        let fixture = EngineFixture(config: .test { $0.ispEnable = true })
        fixture.upstream.setAnswer("www.example.com", .a, addresses: ["192.0.2.1"], ttl: 300)
        fixture.upstream.setAnswer("www.example.com", .aaaa, addresses: ["2001:db8::1"], ttl: 300)
        _ = fixture.resolve("www.example.com", .a)
        _ = fixture.resolve("www.example.com", .aaaa)
        _ = fixture.resolve("www.example.com", .a, network: "198.51.100.0/24")
        let keys = fixture.engine.stats.snapshot().map(\.0)
        #expect(
            keys == [
                StatsKey(domain: "www.example.com", family: .a, network: "198.51.100.0/24"),
                StatsKey(domain: "www.example.com", family: .a, network: "default"),
                StatsKey(domain: "www.example.com", family: .aaaa, network: "default"),
            ])
    }

    @Test func recorderDropsNewKeysBeyondItsLimit() {
        let recorder = StatsRecorder(limit: 2)
        for name in ["a", "b", "c", "d"] {
            recorder.update(StatsKey(domain: name, family: .a, network: "default")) { $0.successNum += 1 }
        }
        // Existing keys still update.
        recorder.update(StatsKey(domain: "a", family: .a, network: "default")) { $0.successNum += 1 }
        #expect(recorder.snapshot().map(\.0.domain) == ["a", "b"])
        #expect(recorder.record(StatsKey(domain: "a", family: .a, network: "default"))?.successNum == 2)
        #expect(recorder.droppedEvents == 2)
    }
}
