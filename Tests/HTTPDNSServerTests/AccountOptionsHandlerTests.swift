import Foundation
import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSServer

/// Account options that change the HTTP surface: `shortEnable`, refresh on demand, the stale and
/// prefetch counters, and options changed through the admin API taking effect at once.
@Suite struct AccountOptionsHandlerTests {
    @Test func shortEnableMakesShortRepliesTheDefaultAndShort0OverridesIt() {
        let fixture = ServiceFixture(config: .test { $0.shortEnable = true })
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.1", "127.0.0.2"], ttl: 60)
        let short = fixture.get("/v1/default/resolve", ["host": "www.example.test"])
        #expect(short.status == 200)
        #expect(strings(short.json) == ["127.0.0.1", "127.0.0.2"])
        let full = fixture.get("/v1/default/resolve", ["host": "www.example.test", "short": "0"])
        #expect(full.object["host"] as? String == "www.example.test")
        #expect(strings(full.object["ips"]) == ["127.0.0.1", "127.0.0.2"])
    }

    @Test func aShortValueOtherThanABooleanIsRejected() {
        let fixture = ServiceFixture()
        let exchange = fixture.get("/v1/default/resolve", ["host": "www.example.test", "short": "yes"])
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidParameter")
        #expect(fixture.upstream.calls("www.example.test") == 0)
    }

    @Test func cacheRefreshReResolvesEveryEntryAndAnswers202() {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("a.example.test", addresses: ["127.0.0.1"], ttl: 60)
        fixture.upstream.setAnswer("b.example.test", addresses: ["127.0.0.2"], ttl: 60)
        _ = fixture.get("/v1/default/resolve", ["host": "a.example.test,b.example.test", "type": "A"])
        let exchange = fixture.send("POST", "/v1/default/cache/refresh")
        #expect(exchange.status == 202)
        #expect(number(exchange.object["refreshing"]) == 2)
        #expect(fixture.upstream.calls("a.example.test") == 2)
        #expect(fixture.upstream.calls("b.example.test") == 2)
        #expect(fixture.engine.metrics.prefetches.value == 2)
    }

    @Test func cacheRefreshNeedsPOSTAndAKnownAccount() {
        let fixture = ServiceFixture()
        #expect(fixture.get("/v1/default/cache/refresh").status == 405)
        let unknown = fixture.send("POST", "/v1/nobody/cache/refresh")
        #expect(unknown.status == 404)
        #expect(unknown.errorCode == "UnknownAccount")
    }

    @Test func staleAndPrefetchCountsReachTheStatsRecord() throws {
        let fixture = ServiceFixture(config: .test { $0.reuseExpiredIPEnabled = true })
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.1"], ttl: 60)
        _ = fixture.get("/v1/default/resolve", ["host": "www.example.test", "type": "A"])
        fixture.clock.advance(by: 61)
        fixture.upstream.holdReplies(true)
        let stale = fixture.handle(
            HTTPRequest(method: "GET", path: "/v1/default/resolve", query: ["host": "www.example.test", "type": "A"]))
        guard case .response(let response) = stale else {
            Issue.record("a stale answer is given at once")
            return
        }
        #expect(response.status == 200)
        #expect(fixture.upstream.releaseAll() == 1)
        _ = fixture.send("POST", "/v1/default/cache/refresh")
        let records = try #require(fixture.get("/v1/default/stats").json as? [[String: Any]])
        let record = try #require(records.first)
        #expect(number(record["staleNum"]) == 1)
        #expect(number(record["prefetchNum"]) == 1)
    }

    @Test func optionsChangedThroughTheAdminAPITakeEffectWithoutRestart() {
        let fixture = ServiceFixture(adminToken: "t0ken")
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.1"], ttl: 60)
        #expect(fixture.get("/v1/default/resolve", ["host": "www.example.test"]).object["ips"] != nil)
        let body = #"{"upstreams":["doh:http://127.0.0.1:9/dns-query"],"localDNSFallback":false,"shortEnable":true}"#
        let put = fixture.send("PUT", "/v1/accounts/default", authorization: "Bearer t0ken", body: Array(body.utf8))
        #expect(put.status == 200)
        #expect(strings(fixture.get("/v1/default/resolve", ["host": "www.example.test"]).json) == ["127.0.0.1"])
    }
}
