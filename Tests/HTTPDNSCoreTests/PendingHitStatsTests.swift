import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// Cache hits are counted in the cache slots and must still reach `cacheDnsNum` exactly, while
/// the entry is cached, after it is refreshed, evicted, removed or flushed.
@Suite struct PendingHitStatsTests {
    private let key = StatsKey(domain: "a.example", family: .a, network: "default")

    private func fixture(limit: Int = 100) -> EngineFixture {
        let fixture = EngineFixture(config: .test { $0.cacheCountLimit = limit })
        for host in ["a.example", "b.example"] { fixture.upstream.setAnswer(host, addresses: ["192.0.2.1"], ttl: 60) }
        _ = fixture.resolve("a.example")
        for _ in 0..<3 { _ = fixture.resolve("a.example") }
        return fixture
    }

    @Test func hitsOfACachedEntryAreInTheRecordAndTheSnapshot() {
        let fixture = fixture()
        #expect(fixture.engine.stats.record(key)?.cacheDnsNum == 3)
        #expect(fixture.engine.stats.snapshot().first { $0.0 == key }?.1.cacheDnsNum == 3)
    }

    @Test func hitsSurviveARefreshAndAnEviction() {
        let fixture = fixture(limit: 1)
        fixture.clock.advance(by: 61)
        _ = fixture.resolve("a.example")  // refreshed from upstream
        _ = fixture.resolve("a.example")  // one more hit
        _ = fixture.resolve("b.example")  // evicts a.example
        #expect(fixture.engine.cacheCount == 1)
        #expect(fixture.engine.stats.record(key)?.cacheDnsNum == 4)
    }

    @Test func hitsSurviveEvictionByHostAndFlush() {
        let byHost = fixture()
        _ = byHost.engine.evict(host: .valid("a.example"))
        #expect(byHost.engine.stats.record(key)?.cacheDnsNum == 3)

        let flushed = fixture()
        _ = flushed.engine.evictAll()
        #expect(flushed.engine.stats.record(key)?.cacheDnsNum == 3)

        let resized = fixture()
        var config = resized.engine.config
        config.cacheCountLimit = 1
        _ = resized.resolve("b.example")
        resized.engine.update(config: config)
        #expect(resized.engine.stats.snapshot().reduce(0) { $0 + $1.1.cacheDnsNum } == 3)
    }
}
