import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// Serve-stale on failure (RFC 8767 style): bounded by `maxStaleAge`, and a failed key is retried
/// with backoff instead of on every request.
@Suite struct ServeStaleBackoffTests {
    /// "shop.example" cached with ttl 30, expired, and its upstream now failing by timeout.
    private func deadUpstreamFixture(maxStaleAge: Double = 86_400) -> EngineFixture {
        let fixture = EngineFixture(
            config: .test {
                $0.localDNSFallback = false
                $0.maxStaleAge = maxStaleAge
            })
        fixture.upstream.setAnswer("shop.example", addresses: ["192.0.2.7"], ttl: 30)
        _ = fixture.resolve("shop.example")
        fixture.clock.advance(by: 31)
        fixture.upstream.setFailure("shop.example", .a, .timeout)
        return fixture
    }

    @Test func afterAFailureTheUpstreamIsNotAskedAgainUntilTheBackoffEnds() throws {
        let fixture = deadUpstreamFixture()
        #expect(fixture.resolve("shop.example").answer?.stale == true)
        #expect(fixture.upstream.calls("shop.example") == 2)

        // Within the first backoff (5 s): answered stale from the cache, upstream left alone.
        for _ in 0..<10 {
            let answer = fixture.resolve("shop.example")
            #expect(answer.fromCache)
            #expect(answer.answer?.stale == true)
        }
        #expect(fixture.upstream.calls("shop.example") == 2)

        // Backoff over: one request retries (in the background) and the key backs off 10 s.
        fixture.clock.advance(by: 5)
        #expect(fixture.resolve("shop.example").answer?.stale == true)
        #expect(fixture.upstream.calls("shop.example") == 3)
        fixture.clock.advance(by: 9)
        _ = fixture.resolve("shop.example")
        #expect(fixture.upstream.calls("shop.example") == 3)
        fixture.clock.advance(by: 1)
        _ = fixture.resolve("shop.example")
        #expect(fixture.upstream.calls("shop.example") == 4)
    }

    @Test func backoffDoublesUpToItsCap() {
        let backoff = RefreshBackoff(base: 5, cap: 60)
        let key = CacheKey(host: .valid("a.example"), family: .a)
        let waits = (0..<6).map { _ in backoff.recordFailure(key, at: 0) }
        #expect(waits == [5, 10, 20, 40, 60, 60])
        #expect(backoff.isWaiting(key, at: 59))
        #expect(!backoff.isWaiting(key, at: 60))
        backoff.clear(key)
        #expect(!backoff.isWaiting(key, at: 1))
    }

    @Test func aSuccessEndsTheBackoff() throws {
        let fixture = deadUpstreamFixture()
        _ = fixture.resolve("shop.example")
        fixture.upstream.setAnswer("shop.example", addresses: ["192.0.2.8"], ttl: 30)
        fixture.clock.advance(by: 5)
        // The retry (background, the entry still being served stale) succeeds...
        #expect(fixture.resolve("shop.example").answer?.stale == true)
        // ...so the next request is a fresh hit.
        let fresh = fixture.resolve("shop.example")
        #expect(fresh.fromCache)
        #expect(fresh.answer?.addresses == ["192.0.2.8"])
        #expect(fixture.engine.backoff.count == 0)
    }

    @Test func staleAnswersOlderThanMaxStaleAgeGiveWayToTheError() {
        let fixture = deadUpstreamFixture(maxStaleAge: 10)
        fixture.clock.advance(by: 10)
        #expect(fixture.resolve("shop.example").failure?.timedOut == true)
        // And during the backoff that follows, it is not served either.
        #expect(!fixture.resolve("shop.example").fromCache)
    }

    @Test func bothBackoffStaleAndFailureStaleAreCountedPerClientServed() {
        let fixture = deadUpstreamFixture()
        _ = fixture.resolve("shop.example")
        _ = fixture.resolve("shop.example")
        #expect(fixture.engine.metrics.staleServed.value == 2)
        #expect(fixture.engine.stats.record(StatsKey(domain: "shop.example", family: .a, network: "default"))?.staleNum == 2)
    }

    @Test func namesWithNothingCachedLeaveNoBackoffBehind() {
        let fixture = deadUpstreamFixture()
        fixture.upstream.setFailure("never.example", .a, .timeout)
        #expect(fixture.resolve("never.example").failure != nil)
        #expect(!fixture.engine.backoff.hasFailed(CacheKey(host: .valid("never.example"), family: .a)))
        // A second request asks the upstream again: there is nothing to serve meanwhile.
        _ = fixture.resolve("never.example")
        #expect(fixture.upstream.calls("never.example") == 2)
    }

    @Test func theBackoffTableStaysWithinItsCapacity() {
        let backoff = RefreshBackoff(capacity: 4)
        for index in 0..<50 {
            backoff.recordFailure(CacheKey(host: .valid("h\(index).example"), family: .a), at: 0)
            #expect(backoff.count <= 4)
        }
        #expect(backoff.hasFailed(CacheKey(host: .valid("h49.example"), family: .a)))
    }
}
