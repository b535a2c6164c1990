import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

@Suite struct AccountRegistryTests {
    /// A registry whose engines share one in-memory upstream and count how often one was made.
    final class Harness: Sendable {
        let clock = ManualClock()
        let upstream = InMemoryUpstream()
        let made = Locked<[String]>([])
        let registry: AccountRegistry

        init() {
            let clock = clock
            let upstream = upstream
            let made = made
            registry = AccountRegistry { id, config in
                made.withLock { $0.append(id) }
                return ResolverEngine(accountID: id, config: config, clock: clock, persistence: nil) { _, _ in
                    UpstreamChain(upstreams: [upstream], fallback: nil)
                }
            }
        }
    }

    /// Accounts are hidden exactly while some account requires signatures, whichever way
    /// accounts are created, changed or removed.
    @Test func accountsAreHiddenWhileSomeAccountRequiresSignatures() {
        let registry = Harness().registry
        let signed = AccountConfig.test {
            $0.clientKeys = [ClientKey(id: "app", secret: "0123456789abcdef0123", role: .resolve)]
            $0.requireSignedRequests = true
        }
        let optional = AccountConfig.test { $0.clientKeys = signed.clientKeys }
        #expect(!registry.hidesAccounts)
        registry.upsert("open", config: .test())
        registry.upsert("keys", config: optional)
        #expect(!registry.hidesAccounts, "keys without requireSignedRequests do not hide accounts")
        registry.upsert("shop", config: signed)
        #expect(registry.hidesAccounts)
        registry.upsert("shop", config: .test())
        #expect(!registry.hidesAccounts, "shop no longer requires signatures")
        registry.upsert(contentsOf: [(id: "a", config: signed), (id: "b", config: signed)])
        #expect(registry.hidesAccounts)
        registry.remove("a")
        #expect(registry.hidesAccounts)
        registry.upsert(contentsOf: [(id: "b", config: .test())])
        #expect(!registry.hidesAccounts)
        registry.upsert("shop", config: signed)
        registry.remove("shop")
        #expect(!registry.hidesAccounts)
    }

    /// `withEngine(utf8:)` and `engine(_:)` find each account's engine and no other, with few
    /// accounts (compared as bytes) and many (looked up by hash), and forget a removed account.
    @Test(arguments: [1, 8, 9, 40])
    func anIdGivenAsBytesFindsTheSameEngine(accounts: Int) {
        let harness = Harness()
        let ids = (0..<accounts).map { "acct-\($0)" }
        for id in ids { harness.registry.upsert(id, config: .test()) }
        func lookup(_ id: String) -> ResolverEngine? {
            var id = id
            return id.withUTF8 { id in harness.registry.withEngine(utf8: UnsafeRawBufferPointer(id)) { $0 } ?? nil }
        }
        for id in ids {
            #expect(harness.registry.engine(id)?.accountID == id)
            #expect(lookup(id) === harness.registry.engine(id))
        }
        for absent in ["acct", "acct-0x", ""] {
            #expect(lookup(absent) == nil)
            #expect(harness.registry.engine(absent) == nil)
        }
        harness.registry.remove(ids[0])
        #expect(lookup(ids[0]) == nil)
        #expect(harness.registry.engine(ids[0]) == nil)
        if accounts > 1 { #expect(lookup(ids[1]) === harness.registry.engine(ids[1])) }
    }

    /// The shard of an id comes from its bytes (not `hashValue`, which the shard's dictionary
    /// computes anyway): ids that differ in one character still spread over the shards, so an
    /// admin write copies few entries.
    @Test func idsSpreadOverTheShards() {
        var sizes = [Int](repeating: 0, count: AccountRegistry.shardCount)
        for index in 0..<5_120 {
            var id = "acct-\(index)"
            id.withUTF8 { sizes[AccountRegistry.shardIndex(UnsafeRawBufferPointer($0))] += 1 }
        }
        #expect(sizes.min()! >= 5, "\(sizes)")
        #expect(sizes.max()! <= 40, "\(sizes)")
    }

    @Test func upsertCreatesOnceThenUpdatesInPlaceKeepingTheCacheWarm() throws {
        let harness = Harness()
        harness.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        #expect(harness.registry.upsert("shop", config: .test()))
        let engine = try #require(harness.registry.engine("shop"))
        _ = engine.resolve(host: .valid("www.example.com"), family: .a) { _ in }

        #expect(!harness.registry.upsert("shop", config: .test { $0.maxCacheTTL = 5 }))
        let same = try #require(harness.registry.engine("shop"))
        #expect(same === engine)
        #expect(same.config.maxCacheTTL == 5)
        #expect(same.cacheCount == 1)
        #expect(harness.made.value == ["shop"])
    }

    @Test func idsAndEnginesAreListedSorted() {
        let harness = Harness()
        for id in ["b", "c", "a"] { harness.registry.upsert(id, config: .test()) }
        #expect(harness.registry.ids == ["a", "b", "c"])
        #expect(harness.registry.all.map(\.accountID) == ["a", "b", "c"])
        #expect(harness.registry.engine("zz") == nil)
        #expect(harness.registry.engine("ab".prefix(1))?.accountID == "a")
    }

    @Test func removeReturnsTheEngineOnce() {
        let harness = Harness()
        harness.registry.upsert("shop", config: .test())
        #expect(harness.registry.remove("shop")?.accountID == "shop")
        #expect(harness.registry.remove("shop") == nil)
        #expect(harness.registry.engine("shop") == nil)
        #expect(harness.registry.upsert("shop", config: .test()))
    }

    /// Two upserts of a new id racing: the one that finds the id taken while it was building its
    /// engine reports "updated" (false), so its configuration must be in force afterwards.
    @Test func upsertThatLosesTheCreationRaceStillAppliesItsConfig() throws {
        let clock = ManualClock()
        let reentered = Locked(false)
        let holder = Locked<AccountRegistry?>(nil)
        let registry = AccountRegistry { id, config in
            // Simulate a concurrent upsert that completes while this engine is being built.
            let first = reentered.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            if first, let registry = holder.value {
                registry.upsert(id, config: .test { $0.maxCacheTTL = 222 })
            }
            return ResolverEngine(accountID: id, config: config, clock: clock, persistence: nil) { _, _ in
                UpstreamChain(upstreams: [], fallback: nil)
            }
        }
        holder.withLock { $0 = registry }

        let created = registry.upsert("shop", config: .test { $0.maxCacheTTL = 111 })
        #expect(!created)
        #expect(registry.engine("shop")?.config.maxCacheTTL == 111)
    }
}
