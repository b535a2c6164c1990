import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// An account costs what it holds and what it is asked: an idle one allocates no cache slots,
/// no histogram blocks, one set of counter stripes for all its counters, and creating many
/// accounts keeps no copy of the account table per account. What an idle
/// account costs in bytes is measured by `bench/idle_accounts.py` on the real binary (a heap
/// reading inside the test process is moved by the tests running beside it).
@Suite struct IdleAccountMemoryTests {
    private static func engine(_ config: AccountConfig = .test()) -> ResolverEngine {
        let upstream = InMemoryUpstream()
        return ResolverEngine(accountID: "idle", config: config, clock: ManualClock(), persistence: nil) { _, _ in
            UpstreamChain(upstreams: [upstream], fallback: nil)
        }
    }

    /// A cache of a million entries (16 shards) allocates nothing until its first entry, then
    /// slots for what it holds, not for its limit.
    @Test func aNewCacheAllocatesNoSlotsUntilItsFirstEntry() throws {
        let cache = AnswerCache(limit: 1_000_000)
        #expect(cache.allocatedSlots == 0)
        let key = CacheKey(host: .valid("www.example.com"), family: .a, network: "")
        cache.set(CacheEntry(addresses: ["192.0.2.1"], originTTL: 60, storedAt: 0), for: key)
        #expect(cache.allocatedSlots > 0)
        #expect(cache.allocatedSlots <= 16)
    }

    /// An idle engine (the default limit) has no cache slots and no request-duration blocks.
    @Test func anIdleEngineHasNoCacheSlotsAndNoHistogramBlocks() {
        let engine = Self.engine(.test { $0.cacheCountLimit = 10_000_000 })
        #expect(engine.cache.allocatedSlots == 0)
        let histograms = engine.metrics.requestDurations
        #expect(!histograms.hasSlotTable)
        #expect((0..<histograms.slots).allSatisfy { histograms.counts($0) == nil })
        engine.metrics.requestDurationRecorder.record(slot: 3, nanoseconds: 1_000)
        #expect(histograms.hasSlotTable)
        #expect(histograms.counts(3)?.count == 1)
        #expect((0..<histograms.slots).filter { histograms.counts($0) != nil } == [3])
    }

    /// Counters of a group share their stripe lines and still count apart.
    @Test func groupedCountersCountApart() {
        let counters = StripedCounter.group(8)
        for (index, counter) in counters.enumerated() { counter.add(index + 1) }
        counters[2].increment()
        #expect(counters.map(\.value) == [1, 2, 4, 4, 5, 6, 7, 8])
        let metrics = EngineMetrics()
        metrics.cacheHits.increment()
        metrics.clientRateRefusals.add(2)
        #expect(
            [metrics.cacheHits.value, metrics.cacheMisses.value, metrics.upstreamBudgetRefusals.value, metrics.clientRateRefusals.value]
                == [1, 0, 0, 2])
    }

    /// Creating 2 000 accounts one by one (as 2 000 admin PUTs, or a start that loads them) keeps
    /// replaced copies of the account table for the grace period: with one table that was every
    /// size from 1 to 2 000 (2 million entries); split in shards, a few entries per account.
    @Test func creatingManyAccountsKeepsFewReplacedTableEntries() {
        let harness = AccountRegistryTests.Harness()
        let count = 2_000
        for index in 0..<count { harness.registry.upsert("acct-\(index)", config: .test()) }
        #expect(harness.registry.count == count)
        #expect(harness.registry.retiredEntries <= 10 * count, "\(harness.registry.retiredEntries) entries kept")
        for index in stride(from: 0, to: count, by: 2) { harness.registry.remove("acct-\(index)") }
        #expect(harness.registry.count == count / 2)
        #expect(harness.registry.retiredEntries <= 20 * count, "\(harness.registry.retiredEntries) entries kept")
    }
}

extension IdleAccountMemoryTests {
    /// A start loads every stored account at once: each shard of the table is published once, so
    /// no copy holding accounts is kept; an account already there takes its new configuration.
    @Test func loadingManyAccountsAtOnceKeepsNoReplacedTableEntries() throws {
        let harness = AccountRegistryTests.Harness()
        harness.registry.upsert("acct-0", config: .test())
        let first = try #require(harness.registry.engine("acct-0"))
        let retiredBefore = harness.registry.retiredEntries
        let accounts = (0..<2_000).map { (id: "acct-\($0)", config: AccountConfig.test { $0.maxCacheTTL = 77 }) }
        harness.registry.upsert(contentsOf: accounts)
        #expect(harness.registry.count == 2_000)
        #expect(harness.registry.engine("acct-0") === first)
        #expect(first.config.maxCacheTTL == 77)
        #expect(harness.registry.engine("acct-1999")?.config.maxCacheTTL == 77)
        // Only the one shard that held acct-0 (and the byte-compared list) was replaced with an entry.
        #expect(harness.registry.retiredEntries - retiredBefore <= 2)
        #expect(harness.made.value.count == 2_000)
    }
}
