import HTTPDNSCore
import Testing

/// `CacheKey` keeps its hash, computed once from its parts, beside the family.
@Suite struct CacheKeyTests {
    private let host = HostName("www.example.test")!

    @Test func theFamilyAndTheStringsReadBackAsGiven() {
        for family in RecordFamily.allCases {
            let key = CacheKey(host: host, family: family, network: "198.51.100.0/24")
            #expect(key.family == family)
            #expect(key.host == host)
            #expect(key.network == "198.51.100.0/24")
        }
    }

    @Test func keysOfTheSamePartsAreEqualAndHashAlike() {
        let one = CacheKey(host: HostName("www.example.test")!, family: .aaaa, network: "10.0.0.0/24")
        let two = CacheKey(host: HostName("WWW.example.test.")!, family: .aaaa, network: "10.0.0.0/24")
        #expect(one == two)
        #expect(one.cacheHash == two.cacheHash)
        #expect(one.hashValue == two.hashValue)
        #expect(Set([one, two]).count == 1)
    }

    @Test func keysDifferingInOnePartDiffer() {
        let key = CacheKey(host: host, family: .a)
        let others = [
            CacheKey(host: host, family: .aaaa), CacheKey(host: host, family: .a, network: "10.0.0.0/24"),
            CacheKey(host: HostName("ww.example.test")!, family: .a),
        ]
        for other in others {
            #expect(other != key)
            #expect(other.cacheHash != key.cacheHash)
        }
        #expect(Set(others + [key]).count == 4)
    }

    /// The family shares the hash's word: the key is no larger than its strings and a word, so a
    /// cache's slot array of `CacheKey?` costs what it did before the hash was kept.
    @Test func theKeptHashMakesTheKeyNoLarger() {
        #expect(MemoryLayout<CacheKey?>.stride == 2 * MemoryLayout<String>.stride + MemoryLayout<Int>.stride)
    }

    /// The family sits in the hash's high bits, so the low bits that pick a cache shard still
    /// spread the keys of one family over every shard.
    @Test func theKeysOfOneFamilySpreadOverEveryShard() {
        let shards = AnswerCache.shardCount(limit: 100_000)
        var used = Set<Int>()
        for index in 0..<1_000 {
            let key = CacheKey(host: HostName("host\(index).example.test")!, family: .a)
            used.insert(Int(UInt(bitPattern: key.cacheHash) % UInt(shards)))
        }
        #expect(shards > 1)
        #expect(used.count == shards)
    }
}
