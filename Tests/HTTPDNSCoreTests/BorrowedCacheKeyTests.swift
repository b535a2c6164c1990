import HTTPDNSCore
import Testing

/// `BorrowedCacheKey`: the resolve fast path's lookup key, from the request's bytes.
@Suite struct BorrowedCacheKeyTests {
    private func withBytes<R>(_ text: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        var text = text
        return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    @Test(arguments: ["a", "www.example.test", "_sip._tcp.example.test", "0123456789abcde", "0123456789abcdef",
                      String(repeating: "a", count: 63) + ".example"])
    func aCanonicalNameFindsTheEntryItsHostNameKeyStored(host: String) {
        let cache = AnswerCache(limit: 100_000)  // sharded: the shard comes from the same hash
        let entry = CacheEntry(addresses: ["192.0.2.7"], originTTL: 60, storedAt: 1000)
        cache.set(entry, for: CacheKey(host: HostName(host)!, family: .aaaa))
        // Neighbours that must not match: another family, a network, a longer name.
        cache.set(CacheEntry(addresses: ["192.0.2.8"], originTTL: 60, storedAt: 1000), for: CacheKey(host: HostName(host)!, family: .a, network: "198.51.100.0/24"))
        cache.set(CacheEntry(addresses: ["192.0.2.9"], originTTL: 60, storedAt: 1000), for: CacheKey(host: HostName(host + "x")!, family: .aaaa))
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
    @Test(arguments: ["WWW.example.test", "www.example.test.", "www.example.tes", "www.example.test\u{0}", "ww.example.test",
                      "www..example.test", "", " www.example.test", "www.example.test,www.example.test"])
    func bytesThatAreNotAStoredNameFindNothing(text: String) {
        let cache = AnswerCache(limit: 100_000)
        let key = CacheKey(host: HostName("www.example.test")!, family: .a)
        cache.set(CacheEntry(addresses: ["192.0.2.7"], originTTL: 60, storedAt: 1000), for: key)
        withBytes(text) { #expect(cache.hit(BorrowedCacheKey(unchecked: $0, family: .a), at: 1001, refreshAhead: false) == nil) }
        #expect(cache.pendingHits(of: key) == 0)
        #expect(cache.count == 1)
    }
}
