import Foundation
import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSTestSupport
import Testing

/// `GET/DELETE /v1/{account}/cache`: cache-only lookups, paged listing, eviction.
@Suite struct CacheHandlerTests {
    static let path = "/v1/default/cache"

    // MARK: Lookup

    @Test func lookupOfAnAbsentHostIs404NotFoundAndAsksNoUpstream() {
        let fixture = ServiceFixture()
        let exchange = fixture.get(Self.path, ["host": "absent.example.test"])
        #expect(!exchange.deferred)
        #expect(exchange.status == 404)
        #expect(exchange.errorCode == "NotFound")
        #expect(fixture.upstream.totalCalls == 0)
    }

    @Test func lookupOfACachedHostAnswersFromTheCacheAtOnce() {
        let fixture = ServiceFixture()
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.11", "127.0.0.12"], ttl: 300))])
        fixture.clock.advance(by: 100)
        let exchange = fixture.get(Self.path, ["host": "www.example.test"])
        #expect(!exchange.deferred)
        #expect(exchange.status == 200)
        #expect(exchange.object["host"] as? String == "www.example.test")
        #expect(strings(exchange.object["ips"]) == ["127.0.0.11", "127.0.0.12"])
        #expect(number(exchange.object["ttl"]) == 200)
        #expect(number(exchange.object["origin_ttl"]) == 300)
        #expect(exchange.object["source"] as? String == "cache")
        #expect(exchange.object["stale"] as? Bool == false)
        #expect(fixture.upstream.totalCalls == 0)
    }

    @Test func anExpiredEntryIsReturnedOnlyWithExpired1AndThenRefreshed() {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("old.example.test", addresses: ["127.0.0.2"], ttl: 60)
        fixture.upstream.holdReplies(true)
        fixture.seed([("old.example.test", .a, fixture.entry(["127.0.0.1"], ttl: 30))])
        fixture.clock.advance(by: 31)

        let plain = fixture.get(Self.path, ["host": "old.example.test"])
        #expect(plain.status == 404)
        #expect(plain.errorCode == "NotFound")
        #expect(fixture.upstream.totalCalls == 0)

        let expired = fixture.handle(HTTPRequest(method: "GET", path: Self.path, query: ["host": "old.example.test", "expired": "1"]))
        guard case .response(let response) = expired else {
            Issue.record("a cache lookup must never wait for the upstream")
            return
        }
        let exchange = Exchange(.response(response))
        #expect(exchange.status == 200)
        #expect(strings(exchange.object["ips"]) == ["127.0.0.1"])
        #expect(exchange.object["stale"] as? Bool == true)
        #expect(exchange.object["source"] as? String == "stale")
        #expect(number(exchange.object["ttl"]) == 0)
        // The background refresh is under way and lands in the cache.
        #expect(fixture.upstream.calls("old.example.test") == 1)
        fixture.upstream.releaseAll()
        let refreshed = fixture.get(Self.path, ["host": "old.example.test"])
        #expect(strings(refreshed.object["ips"]) == ["127.0.0.2"])
    }

    @Test func lookupWithAnEmptyHostIs400MissingArgument() {
        let fixture = ServiceFixture()
        let exchange = fixture.get(Self.path, ["host": ""])
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "MissingArgument")
    }

    @Test func lookupOfAnInvalidHostIs400InvalidHost() {
        let fixture = ServiceFixture()
        let exchange = fixture.get(Self.path, ["host": "no..pe"])
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidHost")
    }

    @Test func aBatchLookupLeavesOutHostsNotCached() {
        let fixture = ServiceFixture()
        fixture.seed([("a.example.test", .a, fixture.entry(["127.0.0.1"]))])
        let exchange = fixture.get(Self.path, ["host": "a.example.test,b.example.test"])
        #expect(exchange.status == 200)
        let results = exchange.object["results"] as? [[String: Any]] ?? []
        #expect(results.map { $0["host"] as? String } == ["a.example.test"])
        #expect(fixture.upstream.totalCalls == 0)
    }

    // MARK: Listing

    /// Names whose order trips up comparisons that are not plain byte order on the whole key.
    static let listedHosts = [
        "a", "a-b", "a.b", "ab", "a0", "a_b", "a.b.c", "a-b.c", "aa", "b", "a--b", "a.a", "z", "0a", "a9",
        "_x.a", "ab.c", "a.bc", "abc", "a-c",
    ]
    static let dualStack: Set<String> = ["a", "a.b", "ab", "a-b", "z"]

    func seedListing(_ fixture: ServiceFixture) -> [String] {
        var entries: [(String, RecordFamily, CacheEntry)] = []
        for (index, host) in Self.listedHosts.enumerated() {
            entries.append((host, .a, fixture.entry(["127.0.2.\(index)"])))
            if Self.dualStack.contains(host) { entries.append((host, .aaaa, fixture.entry(["::\(index + 1)"]))) }
        }
        fixture.seed(entries.shuffled())
        // Expected order: host bytes, then A before AAAA.
        return entries.sorted { lhs, rhs in
            let (l, r) = (Array(lhs.0.utf8), Array(rhs.0.utf8))
            return l != r ? l.lexicographicallyPrecedes(r) : lhs.1.rawValue < rhs.1.rawValue
        }.map { "\($0.0)/\($0.1.typeName)" }
    }

    @Test(arguments: [1, 4, 5, 7, 24, 25, 100])
    func pagingWithTheCursorVisitsEveryEntryOnce(limit: Int) throws {
        let fixture = ServiceFixture()
        let expected = seedListing(fixture)
        #expect(expected.count == 25)
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            var query = ["limit": String(limit)]
            if let cursor { query["cursor"] = cursor }
            let exchange = fixture.get(Self.path, query)
            try #require(exchange.status == 200, "\(exchange.text)")
            let entries = exchange.object["entries"] as? [[String: Any]] ?? []
            #expect(entries.count <= limit)
            #expect(!entries.isEmpty, "an empty page was offered a cursor")
            seen += entries.map { "\($0["host"] as? String ?? "?")/\($0["type"] as? String ?? "?")" }
            cursor = exchange.object["next_cursor"] as? String
            if cursor == nil { #expect(exchange.object["next_cursor"] is NSNull) }
            pages += 1
        } while cursor != nil && pages < 100
        #expect(seen.sorted() == expected.sorted())
        #expect(seen.count == expected.count)
        #expect(pages == (25 + limit - 1) / limit)
    }

    @Test func listedEntriesCarryTheirFields() {
        let fixture = ServiceFixture()
        fixture.seed([
            ("live.example.test", .a, fixture.entry(["127.0.0.1"], ttl: 300)),
            ("gone.example.test", .a, fixture.entry([], ttl: 30, nxdomain: true)),
            ("old.example.test", .aaaa, fixture.entry(["::1"], ttl: 10)),
        ])
        fixture.clock.advance(by: 20)
        let exchange = fixture.get(Self.path)
        #expect(exchange.status == 200)
        let entries = exchange.object["entries"] as? [[String: Any]] ?? []
        #expect(Set(entries.compactMap { $0["host"] as? String }) == ["gone.example.test", "live.example.test", "old.example.test"])
        func listed(_ host: String) -> [String: Any] { entries.first { $0["host"] as? String == host } ?? [:] }
        let gone = listed("gone.example.test"), live = listed("live.example.test"), old = listed("old.example.test")
        #expect(gone["nxdomain"] as? Bool == true)
        #expect(strings(gone["ips"]) == [])
        #expect(number(gone["ttl"]) == 10)
        #expect(live["type"] as? String == "A")
        #expect(strings(live["ips"]) == ["127.0.0.1"])
        #expect(number(live["ttl"]) == 280)
        #expect(number(live["origin_ttl"]) == 300)
        #expect(live["expired"] as? Bool == false)
        #expect(live["nxdomain"] as? Bool == false)
        #expect(old["type"] as? String == "AAAA")
        #expect(old["expired"] as? Bool == true)
        #expect(number(old["ttl"]) == 0)
        #expect(exchange.object["next_cursor"] is NSNull)
    }

    @Test(arguments: ["0", "-1", "abc", "1001"])
    func aLimitOutOfRangeIs400InvalidParameter(limit: String) {
        let fixture = ServiceFixture()
        let exchange = fixture.get(Self.path, ["limit": limit])
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidParameter")
    }

    @Test(arguments: ["garbage", "a,b", "a,x,", "www.example.test,1,", "c1.0.5~00000000", "c1.0.5", "s1.0.0.0.0~1234abcd"])
    func aCursorNotIssuedByTheEndpointIs400InvalidParameter(cursor: String) {
        let fixture = ServiceFixture()
        let exchange = fixture.get(Self.path, ["cursor": cursor])
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidParameter")
    }

    @Test func aCursorIssuedForAnotherAccountOrEditedIs400InvalidParameter() throws {
        let fixture = ServiceFixture()
        fixture.registry.upsert("other", config: fixture.engine.config)
        _ = seedListing(fixture)
        let first = fixture.get(Self.path, ["limit": "3"])
        let cursor = try #require(first.object["next_cursor"] as? String)
        #expect(fixture.get(Self.path, ["limit": "3", "cursor": cursor]).status == 200)
        let other = fixture.get("/v1/other/cache", ["cursor": cursor])
        #expect(other.status == 400)
        #expect(other.errorCode == "InvalidParameter")
        // The same position with another slot number: the check no longer matches.
        let edited = cursor.replacingOccurrences(of: "c1.0.3~", with: "c1.0.4~")
        #expect(edited != cursor)
        #expect(fixture.get(Self.path, ["cursor": edited]).errorCode == "InvalidParameter")
    }

    @Test func aFlushThenAPageWithAnOldCursorEndsTheWalk() throws {
        let fixture = ServiceFixture()
        _ = seedListing(fixture)
        let cursor = try #require(fixture.get(Self.path, ["limit": "3"]).object["next_cursor"] as? String)
        #expect(fixture.send("DELETE", Self.path).status == 200)
        let exchange = fixture.get(Self.path, ["cursor": cursor])
        #expect(exchange.status == 200)
        #expect((exchange.object["entries"] as? [Any])?.isEmpty == true)
        #expect(exchange.object["next_cursor"] is NSNull)
    }

    @Test func anEmptyCacheListsNothing() {
        let fixture = ServiceFixture()
        let exchange = fixture.get(Self.path)
        #expect(exchange.status == 200)
        #expect((exchange.object["entries"] as? [Any])?.isEmpty == true)
        #expect(exchange.object["next_cursor"] is NSNull)
    }

    // MARK: Deletion

    @Test func deletingAHostEvictsEveryFamilyOfThatHostOnly() {
        let persistence = RecordingCachePersistence()
        let fixture = ServiceFixture(persistence: persistence)
        fixture.seed([
            ("www.example.test", .a, fixture.entry(["127.0.0.1"])),
            ("www.example.test", .aaaa, fixture.entry(["::1"])),
            ("other.example.test", .a, fixture.entry(["127.0.0.2"])),
        ])
        let exchange = fixture.send("DELETE", Self.path, query: ["host": "WWW.example.test"])
        #expect(exchange.status == 200)
        #expect(number(exchange.object["deleted"]) == 2)
        #expect(fixture.get(Self.path, ["host": "www.example.test", "type": "both"]).status == 404)
        #expect(fixture.get(Self.path, ["host": "other.example.test"]).status == 200)
        let removed = persistence.operations.compactMap { operation -> CacheKey? in
            if case .remove(_, let key) = operation { key } else { nil }
        }
        #expect(Set(removed.map(\.family)) == [.a, .aaaa])
        #expect(removed.allSatisfy { $0.host.value == "www.example.test" })

        let again = fixture.send("DELETE", Self.path, query: ["host": "www.example.test"])
        #expect(again.status == 200)
        #expect(number(again.object["deleted"]) == 0)
    }

    @Test func deletingWithoutAHostEmptiesTheAccountsCache() {
        let persistence = RecordingCachePersistence()
        let fixture = ServiceFixture(persistence: persistence)
        fixture.registry.upsert("other", config: .test())
        fixture.seed([
            ("a.test", .a, fixture.entry(["127.0.0.1"])), ("b.test", .a, fixture.entry(["127.0.0.2"])),
            ("b.test", .aaaa, fixture.entry(["::2"])),
        ])
        fixture.seed([("c.test", .a, fixture.entry(["127.0.0.3"]))], account: "other")
        let exchange = fixture.send("DELETE", Self.path)
        #expect(exchange.status == 200)
        #expect(number(exchange.object["deleted"]) == 3)
        #expect(fixture.engine.cacheCount == 0)
        #expect(fixture.registry.engine("other")?.cacheCount == 1)
        #expect(persistence.operations.contains(.removeAll(account: "default")))
        #expect(!persistence.operations.contains(.removeAll(account: "other")))
    }

    @Test func deletingAnInvalidHostIs400InvalidHost() {
        let fixture = ServiceFixture()
        fixture.seed([("a.test", .a, fixture.entry(["127.0.0.1"]))])
        let exchange = fixture.send("DELETE", Self.path, query: ["host": "bad..host"])
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidHost")
        #expect(fixture.engine.cacheCount == 1)
    }
}
