import HTTPDNSCore
import Testing

/// `AnswerCache.page`: the cache listed a page at a time by shard and slot, without sorting it.
@Suite struct CachePagingTests {
    private func key(_ index: Int) -> CacheKey {
        CacheKey(host: .valid("h\(index).example.test"), family: .a)
    }

    private let entry = CacheEntry(addresses: ["192.0.2.1"], originTTL: 60, storedAt: 1000)

    /// Every page until `next` is nil, from `start`; stops after `maxPages` (a walk that does not end).
    private func walk(
        _ cache: AnswerCache, limit: Int, scanLimit: Int = 4096, maxPages: Int = 100_000,
        between: (Int) -> Void = { _ in }
    ) -> (keys: [CacheKey], pages: Int, ended: Bool) {
        var keys: [CacheKey] = []
        var position = AnswerCache.Position.start
        var pages = 0
        while pages < maxPages {
            let page = cache.page(from: position, limit: limit, scanLimit: scanLimit)
            #expect(page.entries.count <= limit)
            keys += page.entries.map(\.key)
            pages += 1
            guard let next = page.next else { return (keys, pages, true) }
            position = next
            between(pages)
        }
        return (keys, pages, false)
    }

    @Test(arguments: [(100, 1), (100, 7), (100, 100), (100, 1000), (20_000, 1), (20_000, 333), (20_000, 1000)])
    func pagingVisitsEveryEntryExactlyOnceWhenNothingChanges(count: Int, limit: Int) {
        let cache = AnswerCache(limit: count)  // 20 000: sixteen shards; 100: one
        for index in 0..<count { cache.set(entry, for: key(index)) }
        if count == 20_000 && limit == 1 {
            // 20 000 one-entry pages: enough to show the single-entry case without the time.
            let result = walk(cache, limit: 1, maxPages: 30)
            #expect(Set(result.keys).count == 30)
            return
        }
        // Shards evict on their own, so a few keys may be gone already: compare with what stayed.
        let stored = Set(cache.keys())
        #expect(stored.count > count * 9 / 10)
        let result = walk(cache, limit: limit)
        #expect(result.ended)
        #expect(result.keys.count == stored.count)
        #expect(Set(result.keys) == stored, "listed \(Set(result.keys).symmetricDifference(stored).count) keys wrongly")
    }

    @Test func freeSlotsLeftByRemovalsAreSkippedAndAPageLooksAtNoMoreThanItsScanLimit() {
        let cache = AnswerCache(limit: 1000)
        for index in 0..<1000 { cache.set(entry, for: key(index)) }
        for index in 0..<990 { _ = cache.remove(host: key(index).host) }
        let first = cache.page(from: .start, limit: 5, scanLimit: 100)
        #expect(first.entries.isEmpty)  // 100 empty slots looked at, none in use
        #expect(first.next == AnswerCache.Position(shard: 0, slot: 100))
        let result = walk(cache, limit: 5, scanLimit: 100)
        #expect(result.ended)
        #expect(Set(result.keys) == Set((990..<1000).map(key)))
        #expect(result.keys.count == 10)
    }

    @Test(arguments: [50, 250])
    func aWalkEndsUnderConcurrentInsertsAndEvictionsAndListsThoseThatStayedOnce(limit: Int) {
        // 20 000 entries over sixteen shards; between pages 50 new keys push out as many old ones
        // (the cache is full) and 10 others are removed and put back, in proportion to the page.
        let cache = AnswerCache(limit: 20_000)
        for index in 0..<20_000 { cache.set(entry, for: key(index)) }
        let stored = Set(cache.keys())
        var next = 20_000
        var churned: Set<CacheKey> = []
        let result = walk(cache, limit: limit, maxPages: 1_000_000) { page in
            for _ in 0..<(limit / 5) {
                churned.insert(key(next))
                for (gone, _) in cache.set(entry, for: key(next)) { churned.insert(gone) }
                next += 1
            }
            for offset in 0..<(limit / 25) {
                let moved = key((page * (limit / 25) + offset) % 20_000)
                if cache.remove(host: moved.host).isEmpty == false {
                    churned.insert(moved)
                    for (gone, _) in cache.set(entry, for: moved) { churned.insert(gone) }
                }
            }
        }
        #expect(result.ended)
        // Every slot is visited at most once per walk, so the pages are bounded by the slots.
        #expect(result.pages <= 20_000 / limit + 17)
        var seen: [CacheKey: Int] = [:]
        for key in result.keys { seen[key, default: 0] += 1 }
        let stayed = stored.subtracting(churned)
        #expect(stayed.count > 10_000)
        #expect(stayed.filter { seen[$0] != 1 }.count == 0, "keys that stayed in the cache were not listed exactly once")
        #expect(seen.values.allSatisfy { $0 <= 2 })
    }

    @Test func aPositionPastTheLastShardEndsTheWalk() {
        let cache = AnswerCache(limit: 100)
        cache.set(entry, for: key(1))
        let page = cache.page(from: AnswerCache.Position(shard: 7, slot: 0), limit: 10, scanLimit: 100)
        #expect(page.entries.isEmpty)
        #expect(page.next == nil)
    }
}
