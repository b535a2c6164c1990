import Foundation
import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSTestSupport
import Testing

/// `GET /v1/{account}/stats?limit=&cursor=&domain=`: the records a bounded page at a time, the
/// SDK's array as the body and the next page's cursor in `X-Next-Cursor`.
@Suite struct StatsPagingTests {
    static let path = "/v1/default/stats"

    /// `count` records made directly (no upstream): h0..h(count-1), successNum = index.
    func seedRecords(_ fixture: ServiceFixture, count: Int) -> Set<String> {
        for index in 0..<count {
            fixture.engine.stats.update(StatsKey(domain: "h\(index).example.test", family: .a, network: "default")) {
                $0.successNum = UInt64(index)
            }
        }
        return Set((0..<count).map { "h\($0).example.test" })
    }

    func nextCursor(_ exchange: Exchange) -> String? {
        exchange.response?.headers.first { $0.0 == "X-Next-Cursor" }?.1
    }

    func records(_ exchange: Exchange) -> [[String: Any]] { exchange.json as? [[String: Any]] ?? [] }

    @Test(arguments: [1, 7, 100, 250, 5000])
    func pagingVisitsEveryRecordExactlyOnce(limit: Int) throws {
        let fixture = ServiceFixture()
        let expected = seedRecords(fixture, count: 250)
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            var query = ["limit": String(limit)]
            if let cursor { query["cursor"] = cursor }
            let exchange = fixture.get(Self.path, query)
            try #require(exchange.status == 200, "\(exchange.text)")
            let page = records(exchange)
            #expect(page.count <= limit)
            seen += page.compactMap { $0["domain"] as? String }
            cursor = nextCursor(exchange)
            pages += 1
        } while cursor != nil && pages < 1000
        #expect(seen.count == 250)
        #expect(Set(seen) == expected)
        // The last page may be empty: the recorder's records are done but the cache's pending
        // hits were still to be looked at.
        #expect(pages >= (250 + limit - 1) / limit && pages <= (250 + limit - 1) / limit + 1)
    }

    @Test func withoutALimitAPageHoldsAtMostTheDefault() throws {
        let fixture = ServiceFixture()
        _ = seedRecords(fixture, count: 1500)
        let first = fixture.get(Self.path)
        #expect(records(first).count == 1000)
        let cursor = try #require(nextCursor(first))
        let second = fixture.get(Self.path, ["cursor": cursor])
        #expect(records(second).count == 500)
        #expect(nextCursor(second) == nil)
    }

    @Test func cacheHitsNotYetInARecordAreListedOnceAndCounted() throws {
        let fixture = ServiceFixture()
        _ = seedRecords(fixture, count: 3)
        // A restored entry has no record; its hits are pending in the cache slot only.
        fixture.seed([("warm.example.test", .a, fixture.entry(["127.0.0.1"]))])
        _ = fixture.get("/v1/default/resolve", ["host": "warm.example.test"])
        _ = fixture.get("/v1/default/resolve", ["host": "warm.example.test"])
        var seen: [[String: Any]] = []
        var cursor: String?
        repeat {
            var query = ["limit": "2"]
            if let cursor { query["cursor"] = cursor }
            let exchange = fixture.get(Self.path, query)
            try #require(exchange.status == 200)
            seen += records(exchange)
            cursor = nextCursor(exchange)
        } while cursor != nil && seen.count < 100
        #expect(seen.count == 4)
        let warm = try #require(seen.first { $0["domain"] as? String == "warm.example.test" })
        #expect((warm["cacheDnsNum"] as? NSNumber)?.intValue == 2)
    }

    @Test func aDomainFilterReturnsThatNamesRecordsOnly() throws {
        let fixture = ServiceFixture()
        _ = seedRecords(fixture, count: 50)
        fixture.engine.stats.update(StatsKey(domain: "h7.example.test", family: .aaaa, network: "default")) { $0.successNum = 70 }
        fixture.engine.stats.update(StatsKey(domain: "h7.example.test", family: .a, network: "10.0.0.0/24")) { $0.successNum = 71 }
        let exchange = fixture.get(Self.path, ["domain": "H7.example.test"])
        #expect(exchange.status == 200)
        let found = records(exchange)
        #expect(found.count == 3)
        #expect(found.allSatisfy { $0["domain"] as? String == "h7.example.test" })
        #expect(Set(found.compactMap { ($0["successNum"] as? NSNumber)?.intValue }) == [7, 70, 71])
        #expect(nextCursor(exchange) == nil)

        let paged = fixture.get(Self.path, ["domain": "h7.example.test", "limit": "2"])
        #expect(records(paged).count == 2)
        let cursor = try #require(nextCursor(paged))
        let rest = fixture.get(Self.path, ["domain": "h7.example.test", "limit": "2", "cursor": cursor])
        #expect(records(rest).count == 1)
        // A cursor is bound to its domain.
        #expect(fixture.get(Self.path, ["domain": "h8.example.test", "cursor": cursor]).errorCode == "InvalidParameter")
        #expect(records(fixture.get(Self.path, ["domain": "absent.example.test"])).isEmpty)
        #expect(fixture.get(Self.path, ["domain": "not a name"]).errorCode == "InvalidHost")
    }

    @Test(arguments: ["0", "-3", "x", "5001"])
    func aLimitOutOfRangeIs400InvalidParameter(limit: String) {
        let fixture = ServiceFixture()
        let exchange = fixture.get(Self.path, ["limit": limit])
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidParameter")
    }

    @Test func aGarbageCursorOrOneFromAnotherAccountOrEndpointIs400InvalidParameter() throws {
        let fixture = ServiceFixture()
        fixture.registry.upsert("other", config: fixture.engine.config)
        _ = seedRecords(fixture, count: 10)
        let cursor = try #require(nextCursor(fixture.get(Self.path, ["limit": "3"])))
        #expect(fixture.get(Self.path, ["cursor": cursor]).status == 200)
        for bad in ["garbage", "s1.0.0.3.0", "s1.0.0.3.0~00000000"] {
            #expect(fixture.get(Self.path, ["cursor": bad]).errorCode == "InvalidParameter")
        }
        #expect(fixture.get("/v1/other/stats", ["cursor": cursor]).errorCode == "InvalidParameter")
        #expect(fixture.get("/v1/default/cache", ["cursor": cursor]).errorCode == "InvalidParameter")
    }
}
