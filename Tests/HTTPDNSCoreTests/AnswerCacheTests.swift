import HTTPDNSCore
import Testing

@Suite struct AnswerCacheTests {
    private func key(_ host: String, _ family: RecordFamily = .a, _ network: String = "") -> CacheKey {
        CacheKey(host: .valid(host), family: family, network: network)
    }

    private func entry(_ address: String) -> CacheEntry {
        CacheEntry(addresses: [address], originTTL: 60, storedAt: 1000)
    }

    @Test func smallCacheEvictsTheEntryNotUsedSinceItCameIn() {
        let cache = AnswerCache(limit: 2)
        cache.set(entry("192.0.2.1"), for: key("a.example"))
        cache.set(entry("192.0.2.2"), for: key("b.example"))
        _ = cache.get(key("a.example"))
        #expect(cache.set(entry("192.0.2.3"), for: key("c.example")).map(\.key) == [key("b.example")])
        #expect(cache.peek(key("a.example"))?.addresses == ["192.0.2.1"])
    }

    /// A warm load's batch: in the given order (past the limit the entries given last stay), a
    /// key given twice keeps the later entry, and what left comes back.
    @Test func aBatchGoesInInItsOrderAndReturnsWhatLeft() {
        let cache = AnswerCache(limit: 100)
        var batch = (0..<250).map { (key("h\($0).example"), entry("192.0.2.1")) }
        batch.append((key("h249.example"), entry("192.0.2.2")))
        let left = cache.set(batch)
        #expect(cache.count == 100)
        #expect(Set(cache.keys()) == Set((150..<250).map { key("h\($0).example") }))
        #expect(Set(left.map(\.key)) == Set((0..<150).map { key("h\($0).example") }))
        #expect(left.count == 150)
        #expect(cache.peek(key("h249.example"))?.addresses == ["192.0.2.2"])
    }

    @Test func removeHostReturnsTheRemovedKeys() {
        let cache = AnswerCache(limit: 10)
        cache.set(entry("192.0.2.1"), for: key("a.example"))
        cache.set(entry("2001:db8::1"), for: key("a.example", .aaaa))
        cache.set(entry("192.0.2.2"), for: key("a.example", .a, "198.51.100.0/24"))
        cache.set(entry("192.0.2.3"), for: key("sub.a.example"))
        let removed = cache.remove(host: .valid("a.example"))
        #expect(Set(removed.map(\.key)) == [key("a.example"), key("a.example", .aaaa), key("a.example", .a, "198.51.100.0/24")])
        #expect(cache.count == 1)
    }

    @Test func largeCacheStaysNearItsLimit() {
        let limit = 20_000
        let cache = AnswerCache(limit: limit)
        for index in 0..<30_000 { cache.set(entry("192.0.2.1"), for: key("h\(index).example")) }
        // 16 shards of ceil(limit/16) each: the total may exceed the limit by at most 15.
        #expect(cache.count <= limit + 15)
        #expect(cache.count >= limit - 2_000)
        #expect(cache.snapshot().count == cache.count)
        let count = cache.count
        #expect(cache.removeAll().count == count)
        #expect(cache.count == 0)
    }

    @Test func entryExpiresExactlyAtStoredAtPlusTTL() {
        let entry = CacheEntry(addresses: ["192.0.2.1"], originTTL: 60, storedAt: 1000)
        #expect(!entry.isExpired(at: 1059.999))
        #expect(entry.isExpired(at: 1060))
        #expect(entry.remainingTTL(at: 1000) == 60)
        #expect(entry.remainingTTL(at: 1000.2) == 60)
        #expect(entry.remainingTTL(at: 1059.5) == 1)
        #expect(entry.remainingTTL(at: 1060) == 0)
        #expect(entry.remainingTTL(at: 5000) == 0)
    }

    /// An entry stored "after now" (another replica's clock ahead, a clock stepped back, a
    /// storedAt rounded up to the millisecond) shows its origin TTL, never a second more.
    @Test func theRemainingTTLIsNeverAboveTheOriginTTL() {
        #expect(CacheEntry(addresses: ["192.0.2.1"], originTTL: 60, storedAt: 1000.0004).remainingTTL(at: 1000) == 60)
        #expect(CacheEntry(addresses: ["192.0.2.1"], originTTL: 60, storedAt: 1030).remainingTTL(at: 1000) == 60)
        #expect(CacheEntry(addresses: ["192.0.2.1"], originTTL: 60, storedAt: 1030).remainingTTL(at: 1089.5) == 1)
    }

    @Test func freshHitsAreCountedInTheSlotAndLeaveWithTheKey() throws {
        let cache = AnswerCache(limit: 1)
        cache.set(entry("192.0.2.1"), for: key("a.example"))
        for _ in 0..<3 { _ = cache.hit(key("a.example"), at: 1010, refreshAhead: false) }
        _ = cache.hit(key("a.example"), at: 1060, refreshAhead: false)  // expired: not a hit
        #expect(cache.pendingHits(of: key("a.example")) == 3)
        // A refreshed entry keeps the count; an eviction hands it over.
        cache.set(entry("192.0.2.9"), for: key("a.example"))
        #expect(cache.pendingHits(of: key("a.example")) == 3)
        let evicted = cache.set(entry("192.0.2.2"), for: key("b.example"))
        #expect(evicted.map(\.key) == [key("a.example")])
        #expect(evicted.map(\.hits) == [3])
    }
}
