import HTTPDNSCore
import Testing

/// `BorrowedCacheKey`: the resolve fast path's lookup key, from the request's bytes.
@Suite struct BorrowedCacheKeyTests {
    private func withBytes<R>(_ text: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        var text = text
        return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    @Test(arguments: [
        "a", "www.example.test", "_sip._tcp.example.test", "0123456789abcde", "0123456789abcdef",
        String(repeating: "a", count: 63) + ".example",
    ])
    func aCanonicalNameFindsTheEntryItsHostNameKeyStored(host: String) {
        let cache = AnswerCache(limit: 100_000)  // sharded: the shard comes from the same hash
        let entry = CacheEntry(addresses: ["192.0.2.7"], originTTL: 60, storedAt: 1000)
        cache.set(entry, for: CacheKey(host: HostName(host)!, family: .aaaa))
        // Neighbours that must not match: another family, a network, a longer name.
        cache.set(
            CacheEntry(addresses: ["192.0.2.8"], originTTL: 60, storedAt: 1000),
            for: CacheKey(host: HostName(host)!, family: .a, network: "198.51.100.0/24"))
        cache.set(
            CacheEntry(addresses: ["192.0.2.9"], originTTL: 60, storedAt: 1000), for: CacheKey(host: HostName(host + "x")!, family: .aaaa))
        withBytes(host) { bytes in
            let hit = cache.hit(BorrowedCacheKey(unchecked: bytes, family: .aaaa), at: 1001, refreshAhead: false)
            #expect(hit?.entry == entry)
            #expect(cache.hit(BorrowedCacheKey(unchecked: bytes, family: .a), at: 1001, refreshAhead: false) == nil)
        }
        // The hit was counted on the entry, as a `CacheKey` lookup would have.
        #expect(cache.pendingHits(of: CacheKey(host: HostName(host)!, family: .aaaa)) == 1)
    }

    /// The fast path looks the request's bytes up before checking them: only the exact bytes of
    /// a stored name may find it (a stored name is valid and canonical, so a hit proves the bytes
    /// so too), and a lookup that finds nothing changes nothing.
    @Test(arguments: [
        "WWW.example.test", "www.example.test.", "www.example.tes", "www.example.test\u{0}", "ww.example.test",
        "www..example.test", "", " www.example.test", "www.example.test,www.example.test",
    ])
    func bytesThatAreNotAStoredNameFindNothing(text: String) {
        let cache = AnswerCache(limit: 100_000)
        let key = CacheKey(host: HostName("www.example.test")!, family: .a)
        cache.set(CacheEntry(addresses: ["192.0.2.7"], originTTL: 60, storedAt: 1000), for: key)
        withBytes(text) { #expect(cache.hit(BorrowedCacheKey(unchecked: $0, family: .a), at: 1001, refreshAhead: false) == nil) }
        #expect(cache.pendingHits(of: key) == 0)
        #expect(cache.count == 1)
    }

    /// A key with a client network finds the entry of that network only, as the `CacheKey` of the
    /// same parts does (per-network caches, `ispEnable`); the hit is counted on that entry.
    @Test(arguments: ["198.51.100.0/24", "2001:db8:aa:bb00::/56", ""])
    func aNetworkFindsOnlyItsOwnNetworksEntry(network: String) {
        let cache = AnswerCache(limit: 100_000)
        let host = HostName("www.example.test")!
        let networks = ["198.51.100.0/24", "198.51.100.0/2", "2001:db8:aa:bb00::/56", ""]
        for (index, stored) in networks.enumerated() {
            cache.set(
                CacheEntry(addresses: ["192.0.2.\(index)"], originTTL: 60, storedAt: 1000),
                for: CacheKey(host: host, family: .a, network: stored))
        }
        withBytes("www.example.test") { hostBytes in
            withBytes(network) { networkBytes in
                let hit = cache.hit(
                    BorrowedCacheKey(unchecked: hostBytes, family: .a, network: networkBytes), at: 1001, refreshAhead: false)
                #expect(hit?.entry.addresses == ["192.0.2.\(networks.firstIndex(of: network)!)"])
                #expect(
                    cache.hit(BorrowedCacheKey(unchecked: hostBytes, family: .aaaa, network: networkBytes), at: 1001, refreshAhead: false)
                        == nil)
            }
        }
        #expect(cache.pendingHits(of: CacheKey(host: host, family: .a, network: network)) == 1)
    }

    /// The engine looks a borrowed key up under its network when the account keeps a cache per
    /// network, and ignores the network when it does not, as it does a `network` argument.
    @Test(arguments: [true, false])
    func theEngineUsesTheNetworkOnlyForPerNetworkCaches(ispEnable: Bool) {
        let fixture = EngineFixture(config: .test { $0.ispEnable = ispEnable })
        let host = HostName("www.example.test")!
        let network = "198.51.100.0/24"
        fixture.engine.restore([
            (
                CacheKey(host: host, family: .a, network: network),
                CacheEntry(addresses: ["192.0.2.1"], originTTL: 60, storedAt: fixture.clock.now())
            ),
            (CacheKey(host: host, family: .a), CacheEntry(addresses: ["192.0.2.2"], originTTL: 60, storedAt: fixture.clock.now())),
        ])
        withBytes("www.example.test") { hostBytes in
            withBytes(network) { networkBytes in
                let borrowed = fixture.engine.cachedResolution(BorrowedCacheKey(unchecked: hostBytes, family: .a, network: networkBytes))
                let owned = fixture.engine.cachedResolution(host: host, family: .a, network: network)
                #expect(borrowed?.addresses == [ispEnable ? "192.0.2.1" : "192.0.2.2"])
                #expect(borrowed?.addresses == owned?.addresses)
            }
            let none = fixture.engine.cachedResolution(BorrowedCacheKey(unchecked: hostBytes, family: .a))
            #expect(none?.addresses == ["192.0.2.2"])
        }
    }
}
