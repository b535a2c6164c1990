import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// Eviction by host, flushing, resizing on config update, and what reaches the persistence.
@Suite struct CacheManagementTests {
    private func fixture(limit: Int = 100, persistence: RecordingCachePersistence? = nil, hosts: [String]) -> EngineFixture {
        // Per-network keys need ispEnable.
        let fixture = EngineFixture(
            config: .test {
                $0.cacheCountLimit = limit; $0.persistentCacheIPEnabled = persistence != nil; $0.ispEnable = true
            },
            persistence: persistence)
        for host in hosts {
            fixture.upstream.setAnswer(host, .a, addresses: ["192.0.2.1"], ttl: 300)
            fixture.upstream.setAnswer(host, .aaaa, addresses: ["2001:db8::1"], ttl: 300)
        }
        return fixture
    }

    private func cachedHosts(_ fixture: EngineFixture) -> [String] {
        fixture.engine.cachedEntries().map { "\($0.0.host.value)/\($0.0.family.typeName)" }
    }

    @Test func evictHostRemovesEveryFamilyAndNetworkOfThatHostOnly() {
        let fixture = fixture(hosts: ["www.example.com", "other.example.com"])
        _ = fixture.resolve("www.example.com", .a)
        _ = fixture.resolve("www.example.com", .aaaa)
        _ = fixture.resolve("www.example.com", .a, network: "198.51.100.0/24")
        _ = fixture.resolve("other.example.com", .a)

        #expect(fixture.engine.evict(host: .valid("www.example.com")) == 3)
        #expect(cachedHosts(fixture) == ["other.example.com/A"])
        #expect(!fixture.resolve("www.example.com", .a).fromCache)
        #expect(fixture.upstream.calls("www.example.com", .a) == 3)
        #expect(fixture.engine.evict(host: .valid("absent.example.com")) == 0)
    }

    @Test func evictAllEmptiesTheCacheAndReportsHowManyItHeld() {
        let fixture = fixture(hosts: ["a.example", "b.example"])
        _ = fixture.resolve("a.example", .a)
        _ = fixture.resolve("a.example", .aaaa)
        _ = fixture.resolve("b.example", .a)
        #expect(fixture.engine.evictAll() == 3)
        #expect(fixture.engine.cacheCount == 0)
        #expect(!fixture.resolve("b.example", .a).fromCache)
        #expect(fixture.engine.evictAll() == 1)
    }

    @Test func shrinkingTheLimitEvictsTheLeastRecentlyUsed() {
        let fixture = fixture(limit: 4, hosts: ["a.example", "b.example", "c.example", "d.example"])
        for host in ["a.example", "b.example", "c.example", "d.example"] { _ = fixture.resolve(host) }
        _ = fixture.resolve("a.example")  // a is now the most recently used; b and c are the oldest.

        fixture.engine.update(config: .test { $0.cacheCountLimit = 2 })
        #expect(Set(cachedHosts(fixture)) == ["a.example/A", "d.example/A"])

        // The new limit holds for later inserts too: d, now the least recently used, goes.
        _ = fixture.resolve("b.example")
        #expect(fixture.engine.cacheCount == 2)
        #expect(Set(cachedHosts(fixture)) == ["a.example/A", "b.example/A"])
    }

    @Test func growingTheLimitKeepsEverythingAndAllowsMore() {
        let fixture = fixture(limit: 2, hosts: ["a.example", "b.example", "c.example"])
        _ = fixture.resolve("a.example")
        _ = fixture.resolve("b.example")
        fixture.engine.update(config: .test { $0.cacheCountLimit = 3 })
        _ = fixture.resolve("c.example")
        #expect(fixture.engine.cacheCount == 3)
    }

    @Test func storedAndEvictedEntriesAreMirroredToThePersistence() throws {
        let persistence = RecordingCachePersistence()
        let fixture = fixture(limit: 1, persistence: persistence, hosts: ["a.example", "b.example"])
        _ = fixture.resolve("a.example")
        _ = fixture.resolve("b.example")

        let aKey = CacheKey(host: .valid("a.example"), family: .a)
        let bKey = CacheKey(host: .valid("b.example"), family: .a)
        let operations = persistence.operations
        #expect(operations.count == 3)
        guard operations.count == 3 else { return }
        #expect(
            operations[0]
                == .upsert(
                    account: "test", key: aKey, entry: CacheEntry(addresses: ["192.0.2.1"], originTTL: 300, storedAt: fixture.clock.now())))
        #expect(operations[2] == .remove(account: "test", key: aKey))
        #expect(Array(persistence.stored(account: "test").keys) == [bKey])
    }

    @Test func cacheHitsAreNotWrittenToThePersistence() {
        let persistence = RecordingCachePersistence()
        let fixture = fixture(persistence: persistence, hosts: ["a.example"])
        _ = fixture.resolve("a.example")
        _ = fixture.resolve("a.example")
        #expect(persistence.operations.count == 1)
    }

    @Test func evictionsReachThePersistence() {
        let persistence = RecordingCachePersistence()
        let fixture = fixture(persistence: persistence, hosts: ["a.example", "b.example"])
        _ = fixture.resolve("a.example", .a)
        _ = fixture.resolve("a.example", .aaaa)
        _ = fixture.resolve("b.example", .a)
        _ = fixture.engine.evict(host: .valid("a.example"))
        #expect(Array(persistence.stored(account: "test").keys) == [CacheKey(host: .valid("b.example"), family: .a)])
        _ = fixture.engine.evictAll()
        #expect(persistence.operations.last == .removeAll(account: "test"))
        #expect(persistence.stored(account: "test").isEmpty)
    }

    @Test func resizeEvictionsReachThePersistence() {
        let persistence = RecordingCachePersistence()
        let fixture = fixture(limit: 3, persistence: persistence, hosts: ["a.example", "b.example", "c.example"])
        for host in ["a.example", "b.example", "c.example"] { _ = fixture.resolve(host) }
        fixture.engine.update(
            config: .test {
                $0.cacheCountLimit = 1; $0.persistentCacheIPEnabled = true
            })
        #expect(Array(persistence.stored(account: "test").keys) == [CacheKey(host: .valid("c.example"), family: .a)])
    }

    @Test func turningPersistenceOffDropsThePersistedCacheAndStopsWriting() {
        let persistence = RecordingCachePersistence()
        let fixture = fixture(persistence: persistence, hosts: ["a.example", "b.example"])
        _ = fixture.resolve("a.example")
        fixture.engine.update(config: .test { $0.persistentCacheIPEnabled = false })
        #expect(persistence.operations.last == .removeAll(account: "test"))
        _ = fixture.resolve("b.example")
        #expect(persistence.stored(account: "test").isEmpty)
        #expect(fixture.engine.cacheCount == 2)
    }

    @Test func restoredEntriesAnswerWithoutTheUpstreamAndAreNotWrittenBack() {
        let persistence = RecordingCachePersistence()
        let fixture = fixture(persistence: persistence, hosts: [])
        let key = CacheKey(host: .valid("warm.example"), family: .a)
        fixture.engine.restore([(key, CacheEntry(addresses: ["192.0.2.7"], originTTL: 300, storedAt: fixture.clock.now() - 100))])
        let resolution = fixture.resolve("warm.example")
        #expect(resolution.fromCache)
        #expect(resolution.answer?.ttl == 200)
        #expect(persistence.operations.isEmpty)
        #expect(fixture.upstream.totalCalls == 0)
    }

    @Test func discardingRestoredEntriesEmptiesTheCacheAndLeavesTheStoreAlone() {
        let persistence = RecordingCachePersistence()
        let fixture = fixture(persistence: persistence, hosts: ["a.example"])
        let key = CacheKey(host: .valid("warm.example"), family: .a)
        fixture.engine.restore([(key, CacheEntry(addresses: ["192.0.2.7"], originTTL: 300, storedAt: fixture.clock.now()))])
        _ = fixture.resolve("a.example")
        let operations = persistence.operations
        fixture.engine.discardRestored()
        #expect(fixture.engine.cacheCount == 0)
        #expect(persistence.operations == operations)
        #expect(!fixture.resolve("warm.example").fromCache)
    }

    @Test func persistedCompletesThroughTheStoreFlush() {
        let persistence = RecordingCachePersistence()
        let fixture = fixture(persistence: persistence, hosts: [])
        let box = OutcomeBox()
        fixture.engine.persisted { outcome in
            #expect(outcome == .durable)
            box.append(.failure(ResolveFailure(timedOut: false, message: "flushed")))
        }
        #expect(box.values.count == 1)
        #expect(persistence.flushCount == 1)
    }

    @Test func shrinkingAShardedCacheStillRespectsTheNewLimit() {
        let fixture = fixture(limit: 20_000, hosts: (0..<100).map { "h\($0).example" })
        fixture.engine.update(config: .test { $0.cacheCountLimit = 5 })
        for index in 0..<100 { _ = fixture.resolve("h\(index).example") }
        #expect(fixture.engine.cacheCount <= 5)
    }

    @Test func maxNegativeCacheZeroTurnsNegativeCachingOff() {
        let fixture = EngineFixture(config: .test { $0.maxNegativeCache = 0 })
        fixture.upstream.setReply("missing.example", .a, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true, negativeTTL: 60)))
        let first = fixture.resolve("missing.example")
        #expect(first.answer?.nxdomain == true)
        #expect(first.answer?.stale == false)
        #expect(!fixture.resolve("missing.example").fromCache)
        #expect(fixture.upstream.calls("missing.example") == 2)
    }

    @Test func cachedEntriesAreSortedByHostFamilyAndNetwork() {
        let fixture = fixture(hosts: ["b.example", "a.example"])
        _ = fixture.resolve("b.example", .aaaa)
        _ = fixture.resolve("a.example", .aaaa)
        _ = fixture.resolve("b.example", .a, network: "n2")
        _ = fixture.resolve("b.example", .a, network: "n1")
        _ = fixture.resolve("a.example", .a)
        let keys = fixture.engine.cachedEntries().map { "\($0.0.host.value) \($0.0.family.typeName) \($0.0.network)" }
        #expect(keys == ["a.example A ", "a.example AAAA ", "b.example A n1", "b.example A n2", "b.example AAAA "])
    }
}
