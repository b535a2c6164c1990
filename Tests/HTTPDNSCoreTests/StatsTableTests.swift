import Testing

@testable import HTTPDNSCore

@Suite struct StatsTableTests {
    private func key(_ domain: String, _ family: RecordFamily = .a, _ network: String = "default") -> StatsKey {
        StatsKey(domain: domain, family: family, network: network)
    }

    /// The record's share of the table's memory that its documentation states (72 bytes).
    @Test func aPackedRecordTakesSeventyTwoBytes() {
        #expect(MemoryLayout<PackedStats>.stride == 72)
    }

    @Test func keysDifferingOnlyInFamilyOrNetworkHaveTheirOwnRecords() {
        var table = StatsTable(limit: 10)
        do { let stored = table.update(key("a.test"), { $0.successNum += 1 }); #expect(stored) }
        do { let stored = table.update(key("a.test", .aaaa), { $0.successNum += 2 }); #expect(stored) }
        do { let stored = table.update(key("a.test", .a, "10.0.0.0/24"), { $0.successNum += 3 }); #expect(stored) }
        do { let stored = table.update(key("a.test"), { $0.successNum += 10 }); #expect(stored) }
        #expect(table.record(key("a.test"))?.successNum == 11)
        #expect(table.record(key("a.test", .aaaa))?.successNum == 2)
        #expect(table.record(key("a.test", .a, "10.0.0.0/24"))?.successNum == 3)
        #expect(table.record(key("a.test", .a, "10.0.1.0/24")) == nil)
        #expect(table.record(key("b.test")) == nil)
        #expect(table.count == 3)
    }

    /// A key made from a cache key takes that key's hash; it must equal the key made from the
    /// record's parts, whatever the network (the cache's "", the record's `default` spelled in the
    /// cache, a client network), so that both find one record.
    @Test(arguments: ["", StatsKey.defaultNetwork, "10.0.0.0/24"])
    func aKeyFromACacheKeyIsTheKeyOfTheRecordsParts(network: String) throws {
        let host = try #require(HostName("Mixed.Example.test"))
        for family in RecordFamily.allCases {
            let fromCache = StatsKey(CacheKey(host: host, family: family, network: network))
            let fromParts = key(host.value, family, network.isEmpty ? StatsKey.defaultNetwork : network)
            #expect(fromCache == fromParts)
            #expect(fromCache.tableHash == fromParts.tableHash)
            var table = StatsTable(limit: 10)
            _ = table.update(fromCache) { $0.successNum += 1 }
            #expect(table.record(fromParts)?.successNum == 1)
        }
    }

    @Test func manyKeysSurviveTheIndexGrowing() {
        var table = StatsTable(limit: 50_000)
        for i in 0..<20_000 {
            do {
                let stored = table.update(key("h\(i).test", i % 2 == 0 ? .a : .aaaa, "n\(i % 7)"), { $0.requestPDnsNum = UInt64(i) });
                #expect(stored)
            }
        }
        for i in stride(from: 0, to: 20_000, by: 997) {
            #expect(table.record(key("h\(i).test", i % 2 == 0 ? .a : .aaaa, "n\(i % 7)"))?.requestPDnsNum == UInt64(i))
            #expect(table.record(key("h\(i).test", i % 2 == 0 ? .aaaa : .a, "n\(i % 7)")) == nil)
        }
        #expect(table.entries.count == 20_000)
    }

    /// Keys of one hash share one fingerprint in the index: each still finds its own record, before
    /// and after the index grew (twenty keys outgrow its first 16 buckets), and a key of that hash
    /// that was never stored finds nothing.
    @Test func keysOfOneHashKeepTheirOwnRecordsAcrossTheIndexGrowing() {
        var table = StatsTable(limit: 100)
        func colliding(_ i: Int) -> StatsKey { StatsKey(domain: "c\(i).test", family: .a, network: "default", tableHash: 42) }
        for i in 0..<20 {
            let stored = table.update(colliding(i)) { $0.successNum = UInt64(i + 1) }
            #expect(stored)
            #expect(table.record(colliding(0))?.successNum == 1)
        }
        for i in 0..<20 { #expect(table.record(colliding(i))?.successNum == UInt64(i + 1)) }
        #expect(table.record(colliding(20)) == nil)
        #expect(table.count == 20)
    }

    @Test func newKeysBeyondTheLimitAreRefusedAndOldOnesStillUpdate() {
        var table = StatsTable(limit: 2)
        do { let stored = table.update(key("a"), { $0.successNum += 1 }); #expect(stored) }
        do { let stored = table.update(key("b"), { $0.successNum += 1 }); #expect(stored) }
        do { let stored = table.update(key("c"), { $0.successNum += 1 }); #expect(!stored) }
        do { let stored = table.update(key("a"), { $0.successNum += 1 }); #expect(stored) }
        #expect(table.record(key("a"))?.successNum == 2)
        #expect(table.record(key("c")) == nil)
    }

    /// Counters are stored in 32 bits; one that outgrows them must keep counting exactly.
    @Test func aCounterPastThirtyTwoBitsKeepsItsExactValue() {
        var table = StatsTable(limit: 4)
        let limit = UInt64(UInt32.max)
        _ = table.update(
            key("hot.test"),
            {
                $0.cacheDnsNum = limit; $0.successNum = 5
            })
        _ = table.update(key("cold.test"), { $0.cacheDnsNum = 1 })
        _ = table.update(key("hot.test"), { $0.cacheDnsNum += 1 })
        _ = table.update(
            key("hot.test"),
            {
                $0.cacheDnsNum += 1; $0.successNum += 1
            })
        #expect(table.record(key("hot.test"))?.cacheDnsNum == limit + 2)
        #expect(table.record(key("hot.test"))?.successNum == 6)
        #expect(table.record(key("cold.test"))?.cacheDnsNum == 1)
        // A record created already past 32 bits, too.
        _ = table.update(key("born.test"), { $0.requestPDnsNum = limit * 3 })
        #expect(table.record(key("born.test"))?.requestPDnsNum == limit * 3)
        let all = Dictionary(uniqueKeysWithValues: table.entries.map { ($0.0.domain, $0.1) })
        #expect(all["hot.test"]?.cacheDnsNum == limit + 2)
        #expect(all["born.test"]?.requestPDnsNum == limit * 3)
    }

    @Test func packingKeepsEveryField() {
        var stats = DomainStats()
        stats.successNum = 1; stats.cacheDnsNum = 2; stats.requestPDnsNum = 3; stats.gobackLocaldnsNum = 4
        stats.localErro = 5; stats.timeoutErro = 6; stats.noResponseErro = 7; stats.noPermissionErro = 8
        stats.urlParameterErro = 9; stats.urlPathErro = 10; stats.staleNum = 11; stats.prefetchNum = 12
        stats.recordRTT(seconds: 0.0125)
        stats.recordRTT(seconds: 0.2)
        #expect(PackedStats(stats)?.unpacked == stats)
        stats.rttCount = UInt64(UInt32.max) + 1
        #expect(PackedStats(stats) == nil)
    }
}
