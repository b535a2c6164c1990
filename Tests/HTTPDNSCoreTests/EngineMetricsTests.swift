import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

@Suite struct EngineMetricsTests {
    private func counts(_ fixture: EngineFixture) -> [String: UInt64] {
        Dictionary(uniqueKeysWithValues: fixture.engine.metrics.upstreamCounts.map { ("\($0.0.upstream) \($0.0.outcome)", $0.1) })
    }

    @Test func upstreamOutcomesAreLabelledPerUpstream() {
        let fixture = EngineFixture(
            config: .test {
                $0.localDNSFallback = false; $0.cacheEnable = false
            }, upstreamCount: 2)
        let codes: [UpstreamError.Code] = [
            .timeout, .transport, .permission, .badRequest, .notFound, .httpStatus, .malformed, .serverFailure,
        ]
        for (index, code) in codes.enumerated() {
            fixture.upstreams[0].setFailure("h\(index).example", .a, code)
            fixture.upstreams[1].setAnswer("h\(index).example", addresses: ["192.0.2.1"], ttl: 300)
            _ = fixture.resolve("h\(index).example")
        }
        fixture.upstreams[0].setReply("missing.example", .a, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true)))
        _ = fixture.resolve("missing.example")
        _ = fixture.resolve("missing.example")

        #expect(
            counts(fixture) == [
                "memory-0 timeout": 1, "memory-0 transport": 1, "memory-0 permission": 1, "memory-0 bad_request": 1,
                "memory-0 not_found": 1, "memory-0 http_status": 1, "memory-0 malformed": 1, "memory-0 server_failure": 1,
                "memory-0 negative": 2, "memory-1 success": 8,
            ])
    }

    @Test func requestHitAndMissCountersFollowTheCache() {
        let fixture = EngineFixture()
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        _ = fixture.resolve("www.example.com")
        _ = fixture.resolve("www.example.com")
        _ = fixture.resolve("www.example.com")
        let metrics = fixture.engine.metrics
        #expect(metrics.resolveRequestCount == 3)
        #expect(metrics.cacheMisses.value == 1)
        #expect(metrics.cacheHits.value == 2)
        #expect(metrics.negativeHits.value == 0)
    }

    @Test func fallbackOutcomesAndFailuresAreCounted() {
        let fixture = EngineFixture()
        fixture.upstream.setFailure("ok.example", .a, .transport)
        fixture.fallback.setAnswer("ok.example", addresses: ["192.0.2.53"], ttl: nil)
        fixture.upstream.setFailure("down.example", .a, .transport)
        fixture.fallback.setFailure("down.example", .a, .transport)
        _ = fixture.resolve("ok.example")
        _ = fixture.resolve("down.example")
        let metrics = fixture.engine.metrics
        #expect(metrics.fallbackSuccess.value == 1)
        #expect(metrics.fallbackFailure.value == 1)
        #expect(metrics.resolveFailures.value == 1)
        // The fallback is not an upstream: it has no outcome row of its own.
        #expect(counts(fixture) == ["memory-0 transport": 2])
    }
}
