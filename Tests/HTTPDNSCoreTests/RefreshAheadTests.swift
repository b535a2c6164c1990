import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// `schedulePrefetchEnable`: refresh-ahead in the last tenth of the TTL, the scheduled prefetch of
/// requested entries, refresh on demand and `preResolveAfterNetworkChanged`.
@Suite struct RefreshAheadTests {
    private func fixture(_ change: (inout AccountConfig) -> Void = { _ in }) -> EngineFixture {
        let fixture = EngineFixture(
            config: .test {
                $0.schedulePrefetchEnable = true
                change(&$0)
            })
        fixture.upstream.setAnswer("shop.example", addresses: ["192.0.2.1"], ttl: 100)
        _ = fixture.resolve("shop.example")
        fixture.upstream.setAnswer("shop.example", addresses: ["192.0.2.2"], ttl: 100)
        return fixture
    }

    @Test func theWindowIsTheLastTenthOfTheTTLAndAtLeastOneSecond() {
        let long = CacheEntry(addresses: ["192.0.2.1"], originTTL: 100, storedAt: 0)
        #expect(!long.isInRefreshAheadWindow(at: 89.9))
        #expect(long.isInRefreshAheadWindow(at: 90))
        #expect(long.isInRefreshAheadWindow(at: 99.9))
        #expect(!long.isInRefreshAheadWindow(at: 100))
        let short = CacheEntry(addresses: ["192.0.2.1"], originTTL: 5, storedAt: 0)
        #expect(!short.isInRefreshAheadWindow(at: 3.9))
        #expect(short.isInRefreshAheadWindow(at: 4))
    }

    @Test func aHitInTheLastTenthRefreshesOnceInTheBackground() throws {
        let fixture = fixture()
        fixture.clock.advance(by: 89)
        #expect(fixture.resolve("shop.example").fromCache)
        #expect(fixture.upstream.calls("shop.example") == 1)

        fixture.upstream.holdReplies(true)
        fixture.clock.advance(by: 2)
        let hit = fixture.resolve("shop.example")
        #expect(hit.fromCache)
        #expect(hit.answer?.addresses == ["192.0.2.1"])
        #expect(fixture.upstream.calls("shop.example") == 2)
        // More hits in the window while it runs: no second refresh.
        _ = fixture.resolve("shop.example")
        _ = fixture.resolve("shop.example")
        #expect(fixture.upstream.calls("shop.example") == 2)

        #expect(fixture.upstream.release() == 1)
        let after = fixture.resolve("shop.example")
        #expect(after.answer == ResolvedAnswer(addresses: ["192.0.2.2"], ttl: 100, originTTL: 100, source: .cache))
        #expect(fixture.engine.metrics.prefetches.value == 1)
        #expect(fixture.engine.stats.record(StatsKey(domain: "shop.example", family: .a, network: "default"))?.prefetchNum == 1)
    }

    @Test func aFailedRefreshAheadIsNotRepeatedForTheSameEntry() {
        let fixture = fixture()
        fixture.upstream.setFailure("shop.example", .a, .timeout)
        fixture.clock.advance(by: 91)
        for _ in 0..<5 { #expect(fixture.resolve("shop.example").answer?.addresses == ["192.0.2.1"]) }
        #expect(fixture.upstream.calls("shop.example") == 2)
    }

    @Test func withTheOptionOffNothingIsRefreshedAhead() {
        let fixture = fixture { $0.schedulePrefetchEnable = false }
        fixture.clock.advance(by: 95)
        _ = fixture.resolve("shop.example")
        #expect(fixture.upstream.calls("shop.example") == 1)
        #expect(fixture.engine.runScheduledPrefetch() == 0)
    }

    @Test func theSchedulerRefreshesOnlyEntriesRequestedSinceTheyWereStored() {
        let fixture = fixture()
        fixture.upstream.setAnswer("idle.example", addresses: ["192.0.2.9"], ttl: 100)
        _ = fixture.resolve("idle.example")
        fixture.clock.advance(by: 10)
        _ = fixture.resolve("shop.example")  // requested, not in the refresh-ahead window

        // Nothing expires before the next run yet.
        #expect(fixture.engine.runScheduledPrefetch() == 0)

        fixture.clock.advance(by: 101)  // both expired; only shop.example was requested
        #expect(fixture.engine.runScheduledPrefetch() == 1)
        #expect(fixture.upstream.calls("shop.example") == 2)
        #expect(fixture.upstream.calls("idle.example") == 1)
        #expect(fixture.resolve("shop.example").answer?.addresses == ["192.0.2.2"])

        // The refreshed entry was not requested since: the next run leaves it alone.
        fixture.clock.advance(by: 100)
        #expect(fixture.engine.runScheduledPrefetch() == 1)  // the hit above requested it again
        fixture.clock.advance(by: 100)
        #expect(fixture.engine.runScheduledPrefetch() == 0)
    }

    @Test func theSchedulerAlsoTakesEntriesExpiringBeforeItsNextRun() {
        let fixture = fixture()
        _ = fixture.resolve("shop.example")
        fixture.clock.advance(by: 41)  // expires in 59 s < 60 s
        #expect(fixture.engine.runScheduledPrefetch() == 1)
        #expect(fixture.upstream.calls("shop.example") == 2)
    }

    /// Caches 20 requested hosts with replies held, lets them expire and runs the scheduled
    /// prefetch: the first `refreshConcurrency` refreshes are in flight, the rest queued.
    private func queueTwentyRefreshes(_ fixture: EngineFixture) -> [String] {
        fixture.upstream.holdReplies(true)
        let hosts = (0..<20).map { "h\($0).example" }
        for host in hosts {
            fixture.upstream.setAnswer(host, addresses: ["192.0.2.3"], ttl: 100)
            _ = fixture.resolve(host)
        }
        #expect(fixture.upstream.releaseAll() == 20)
        for host in hosts { _ = fixture.resolve(host) }
        fixture.clock.advance(by: 101)
        #expect(fixture.engine.runScheduledPrefetch() == 20)
        return hosts
    }

    @Test func scheduledRefreshesRunWithBoundedConcurrency() {
        let fixture = fixture()
        let hosts = queueTwentyRefreshes(fixture)
        let asked = hosts.reduce(0) { $0 + fixture.upstream.calls($1) } - 20
        #expect(asked == ResolverEngine.refreshConcurrency)
        #expect(fixture.engine.refreshBacklog == 20)
        #expect(fixture.upstream.releaseAll() == 20)
        #expect(fixture.engine.refreshBacklog == 0)
        #expect(fixture.engine.metrics.prefetches.value == 20)
    }

    /// The refresh queue holds its engine `unowned`: an engine dropped (account deleted) while
    /// refreshes wait in its queue must stay alive through the ones in flight and those still
    /// queued, which start as the others end, and then be freed. Starting one on a freed engine
    /// would trap here.
    @Test func anEngineDroppedWithRefreshesQueuedFinishesThemAndIsThenFreed() {
        let upstream: InMemoryUpstream
        weak var dropped: ResolverEngine?
        do {
            let fixture = fixture()
            _ = queueTwentyRefreshes(fixture)
            #expect(fixture.engine.refreshBacklog == 20)
            upstream = fixture.upstream
            dropped = fixture.engine
        }
        #expect(dropped != nil)  // held by the refreshes in flight
        #expect(upstream.releaseAll() == 20)
        #expect(dropped == nil)
    }

    @Test func refreshAllReResolvesEveryCachedEntry() {
        let fixture = fixture()
        fixture.upstream.setAnswer("other.example", addresses: ["192.0.2.5"], ttl: 100)
        _ = fixture.resolve("other.example")
        #expect(fixture.engine.refreshAll() == 2)
        #expect(fixture.upstream.calls("shop.example") == 2)
        #expect(fixture.upstream.calls("other.example") == 2)
        #expect(fixture.resolve("shop.example").answer?.addresses == ["192.0.2.2"])
    }

    @Test func changedUpstreamsReResolveTheCacheOnlyWithPreResolveAfterNetworkChanged() {
        let fixture = fixture { $0.preResolveAfterNetworkChanged = true }
        var config = fixture.engine.config
        config.maxCacheTTL = 600  // not a network setting
        fixture.engine.update(config: config)
        #expect(fixture.upstream.calls("shop.example") == 1)

        config.upstreams = [UpstreamSpec(kind: .doh, url: "http://127.0.0.1:9/dns-query")]
        fixture.engine.update(config: config)
        #expect(fixture.upstream.calls("shop.example") == 2)

        config.preResolveAfterNetworkChanged = false
        config.upstreams = [UpstreamSpec(kind: .json, url: "http://127.0.0.1:9/resolve")]
        fixture.engine.update(config: config)
        #expect(fixture.upstream.calls("shop.example") == 2)
    }
}
