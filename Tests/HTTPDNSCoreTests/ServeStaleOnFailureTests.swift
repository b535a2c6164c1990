import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// When nothing answers, an expired cached answer is better than an error (DESIGN: 502/504 only
/// "when nothing could be resolved and nothing is cached").
@Suite struct ServeStaleOnFailureTests {
    private func fixtureWithExpiredAnswer() -> EngineFixture {
        let fixture = EngineFixture(config: .test { $0.localDNSFallback = false })
        fixture.upstream.setReply("shop.example", .a, .success(UpstreamAnswer(addresses: ["192.0.2.7"], ttl: 30)))
        _ = fixture.resolve("shop.example")
        fixture.clock.advance(by: 31)
        return fixture
    }

    @Test func expiredAnswerIsServedStaleWhenEveryResolverFails() throws {
        let fixture = fixtureWithExpiredAnswer()
        fixture.upstream.setFailure("shop.example", .a, .timeout)
        let answer = try #require(fixture.resolve("shop.example").answer)
        #expect(answer.addresses == ["192.0.2.7"])
        #expect(answer.stale)
        #expect(answer.source == .stale)
        #expect(answer.ttl == 0)
        #expect(fixture.engine.metrics.staleServed.value == 1)
        #expect(fixture.upstream.calls("shop.example") == 2)
    }

    @Test func aStaleAnswerIsCountedOncePerClientItServes() throws {
        let fixture = fixtureWithExpiredAnswer()
        fixture.upstream.setFailure("shop.example", .a, .timeout)
        fixture.upstream.holdReplies(true)
        // One flight: the first client leads it, the other two join it.
        let resolutions = (0..<3).map { _ in fixture.resolve("shop.example") }
        #expect(fixture.upstream.release() == 1)
        for resolution in resolutions { #expect(resolution.answer?.stale == true) }
        #expect(fixture.engine.metrics.staleServed.value == 3)
        let record = try #require(fixture.engine.stats.record(StatsKey(domain: "shop.example", family: .a, network: "default")))
        #expect(record.staleNum == 3)
    }

    @Test func withoutACachedAnswerTheFailureStands() {
        let fixture = fixtureWithExpiredAnswer()
        fixture.upstream.setFailure("other.example", .a, .timeout)
        #expect(fixture.resolve("other.example").failure?.timedOut == true)
        #expect(fixture.engine.metrics.staleServed.value == 0)
    }

    @Test func aSuccessfulRefreshReplacesTheExpiredAnswer() throws {
        let fixture = fixtureWithExpiredAnswer()
        fixture.upstream.setReply("shop.example", .a, .success(UpstreamAnswer(addresses: ["192.0.2.8"], ttl: 30)))
        let answer = try #require(fixture.resolve("shop.example").answer)
        #expect(answer.addresses == ["192.0.2.8"])
        #expect(!answer.stale)
        #expect(fixture.engine.metrics.staleServed.value == 0)
    }
}
