import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

/// The answer cache's eviction policy (`S3FIFOPolicy`) through the cache type it runs in.
@Suite struct S3FIFOPolicyTests {
    typealias Cache = BoundedCache<String, Int, S3FIFOPolicy>

    /// Uses `key` `times` times after it is stored.
    private func use(_ key: String, _ times: Int, in cache: inout Cache) {
        for _ in 0..<times { #expect(cache.value(for: key) != nil) }
    }

    @Test func oneHitWondersDoNotEvictAFrequentlyUsedEntry() {
        var cache = Cache(capacity: 10)
        cache.set(0, for: "hot")
        use("hot", 3, in: &cache)
        var evicted: [String] = []
        for index in 0..<100 { evicted += cache.set(index, for: "once-\(index)").map(\.0) }
        #expect(cache.peek("hot") == 0)
        #expect(!evicted.contains("hot"))
        #expect(evicted.count == 100 - 9)
        #expect(cache.count == 10)
    }

    @Test func frequentlyUsedEntriesSurviveAScanOfTenTimesTheCapacity() {
        var cache = Cache(capacity: 100)
        let hot = (0..<20).map { "hot-\($0)" }
        for key in hot { cache.set(0, for: key) }
        for _ in 0..<2 { for key in hot { use(key, 1, in: &cache) } }
        for index in 0..<1_000 { cache.set(index, for: "scan-\(index)") }
        #expect(hot.filter { cache.peek($0) == nil }.count == 0)
        #expect(cache.count == 100)
        // The scan itself is kept as far as room allows: its newest names are still there.
        #expect(cache.peek("scan-999") == 999)
    }

    @Test func agingLetsAFormerlyHotEntryGo() {
        var cache = Cache(capacity: 10)
        cache.set(0, for: "formerly-hot")
        use("formerly-hot", 50, in: &cache)
        // A new working set, each name used again after it is stored: it earns its place in the
        // main queue, and the old entry, no longer used, loses one count per pass and goes.
        var evictedAt: Int?
        for index in 0..<100 where evictedAt == nil {
            cache.set(index, for: "new-\(index)")
            use("new-\(index)", 1, in: &cache)
            if cache.peek("formerly-hot") == nil { evictedAt = index }
        }
        #expect(evictedAt != nil)
        #expect(cache.count == 10)
    }

    @Test func aKeyEvictedUnusedEntersTheMainQueueWhenItComesBack() {
        var cache = Cache(capacity: 10)
        cache.set(0, for: "returning")
        for index in 0..<10 { cache.set(index, for: "filler-\(index)") }
        #expect(cache.peek("returning") == nil)  // evicted unused, remembered by the ghost
        cache.set(1, for: "returning")
        // Back in main, it outlasts a stream of names that pass through the small queue.
        for index in 0..<50 { cache.set(index, for: "later-\(index)") }
        #expect(cache.peek("returning") == 1)
    }

    @Test func capacityHoldsThroughInsertionsRemovalsAndResizes() {
        var generator = SplitMix64(seed: 16)
        var cache = BoundedCache<CollidingKey, Int, S3FIFOPolicy>(capacity: 50)
        var model: [Int: Int] = [:]
        var capacity = 50
        for step in 0..<10_000 {
            let id = Int(generator.next() % 200)
            switch generator.next() % 20 {
            case 0...9:
                model[id] = step
                // At capacity 0 the new key itself comes back: nothing is stored.
                for (key, _) in cache.set(step, for: CollidingKey(id: id)) { model.removeValue(forKey: key.id) }
            case 10...15:
                #expect(cache.value(for: CollidingKey(id: id)) == model[id])
            case 16...18:
                #expect(cache.removeValue(for: CollidingKey(id: id)) == model.removeValue(forKey: id))
            default:
                if generator.next() % 10 == 0 {
                    capacity = Int(generator.next() % 80)
                    for (key, _) in cache.setCapacity(capacity) { model.removeValue(forKey: key.id) }
                } else if generator.next() % 100 == 0 {
                    cache.removeAll()
                    model.removeAll()
                }
            }
            if cache.count != model.count || cache.count > capacity {
                Issue.record("step \(step): count \(cache.count), model \(model.count), capacity \(capacity)")
                return
            }
        }
        for id in 0..<200 { #expect(cache.peek(CollidingKey(id: id)) == model[id]) }
        var listed = 0
        cache.forEach { key, value in
            listed += 1
            #expect(model[key.id] == value)
        }
        #expect(listed == model.count)
    }

    @Test func capacityOfZeroStoresNothing() {
        var cache = Cache(capacity: 0)
        #expect(cache.set(1, for: "a").map(\.0) == ["a"])
        #expect(cache.count == 0)
    }
}

/// The same rules in the answer cache, with its entries' lifetimes.
@Suite struct AnswerCachePolicyTests {
    private func key(_ host: String) -> CacheKey { CacheKey(host: .valid(host), family: .a) }

    private func entry(ttl: UInt32 = 60) -> CacheEntry { CacheEntry(addresses: ["192.0.2.1"], originTTL: ttl, storedAt: 1000) }

    @Test(arguments: [100, 20_000])
    func aFloodOfNamesAskedOnceLeavesTheHotSetCached(limit: Int) {
        let cache = AnswerCache(limit: limit)
        let hot = (0..<limit / 10).map { key("hot\($0).example") }
        for key in hot { cache.set(entry(), for: key) }
        for _ in 0..<2 { for key in hot { #expect(cache.hit(key, at: 1001, refreshAhead: false) != nil) } }
        for index in 0..<(10 * limit) { cache.set(entry(), for: key("flood\(index).example")) }
        let missing = hot.filter { cache.hit($0, at: 1002, refreshAhead: false) == nil }
        #expect(missing.count == 0)
        #expect(cache.count <= limit)
    }

    @Test func anExpiredEntryStaysForStaleServingButIsNotAHit() {
        let cache = AnswerCache(limit: 10)
        cache.set(entry(ttl: 60), for: key("a.example"))
        let expired = cache.hit(key("a.example"), at: 1060, refreshAhead: false)
        #expect(expired?.entry.isExpired(at: 1060) == true)
        #expect(cache.pendingHits(of: key("a.example")) == 0)
        #expect(cache.hit(key("a.example"), at: 1059, refreshAhead: false) != nil)
        #expect(cache.pendingHits(of: key("a.example")) == 1)
    }

    @Test func aWarmLoadLargerThanTheLimitKeepsTheEntriesLoadedLast() {
        let cache = AnswerCache(limit: 100)
        for index in 0..<250 { cache.set(entry(), for: key("h\(index).example")) }
        #expect(cache.count == 100)
        #expect(Set(cache.keys()) == Set((150..<250).map { key("h\($0).example") }))
    }

    @Test func aRefreshIsNotAUse() {
        let cache = AnswerCache(limit: 2)
        cache.set(entry(), for: key("a.example"))
        for _ in 0..<3 { cache.set(entry(), for: key("a.example")) }  // refreshed, never asked
        cache.set(entry(), for: key("b.example"))
        #expect(cache.set(entry(), for: key("c.example")).map(\.key) == [key("a.example")])
    }
}
