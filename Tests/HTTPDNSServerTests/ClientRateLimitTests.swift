import Foundation
import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSServer

/// The limit step: a token bucket per (account, client address), 429 `RateLimited` with
/// `Retry-After` over it, on both the full path and the resolve fast path, on a manual clock.
@Suite struct ClientRateLimitTests {
    private func fixture(
        rate: Double = 2, burst: Int = 3, trustedProxies: [CIDR] = [], keying: ClientKeying = ClientKeying(),
        _ change: (inout AccountConfig) -> Void = { _ in }
    ) -> ServiceFixture {
        let fixture = ServiceFixture(
            config: .test(change),
            limits: HTTPDNSService.Limits(
                trustedProxies: trustedProxies, clientRate: .init(perSecond: rate, burst: burst), clientKeying: keying))
        fixture.seed([("www.example.test", .a, fixture.entry(["192.0.2.1"]))])
        return fixture
    }

    private func resolve(_ fixture: ServiceFixture, peer: String, forwardedFor: String? = nil, query: [String: String] = [:]) -> Exchange {
        fixture.get("/v1/default/resolve", ["host": "www.example.test"].merging(query) { $1 }, peer: peer, forwardedFor: forwardedFor)
    }

    @Test func aClientOverItsRateGets429WithRetryAfterUntilTheBucketRefills() throws {
        let fixture = fixture()
        for _ in 0..<3 { #expect(resolve(fixture, peer: "192.0.2.50").status == 200) }
        let refused = resolve(fixture, peer: "192.0.2.50")
        #expect(refused.status == 429)
        #expect(refused.errorCode == "RateLimited")
        let retryAfter = try #require(refused.response?.headers.first { $0.0 == "Retry-After" }?.1)
        #expect(Int(retryAfter) == 1)
        fixture.clock.advance(by: Double(retryAfter)!)
        #expect(resolve(fixture, peer: "192.0.2.50").status == 200)
    }

    @Test func otherClientsAndOtherAccountsHaveTheirOwnBuckets() {
        let fixture = fixture(rate: 1, burst: 1)
        fixture.registry.upsert("other", config: .test())
        #expect(resolve(fixture, peer: "192.0.2.50").status == 200)
        #expect(resolve(fixture, peer: "192.0.2.50").status == 429)
        #expect(resolve(fixture, peer: "192.0.2.51").status == 200)
        #expect(resolve(fixture, peer: "2001:db8::50").status == 200)
        #expect(fixture.get("/v1/other/stats", peer: "192.0.2.50").status == 200)
    }

    /// A host given a /64 is one client however many of its addresses it uses, on the full path
    /// (a batch) and the fast path (one host) alike; the prefix length is configurable.
    @Test func anIPv6ClientIsLimitedPerSlash64() {
        let fixture = fixture(rate: 1, burst: 2)
        #expect(resolve(fixture, peer: "2001:db8:1:2::1").status == 200)
        #expect(resolve(fixture, peer: "2001:db8:1:2:ffff::2", query: ["host": "www.example.test,www.example.test"]).status == 200)
        #expect(resolve(fixture, peer: "2001:db8:1:2:abcd::3").status == 429)
        #expect(resolve(fixture, peer: "2001:db8:1:3::1").status == 200)

        let perAddress = self.fixture(rate: 1, burst: 1, keying: ClientKeying(ipv6PrefixLength: 128))
        #expect(resolve(perAddress, peer: "2001:db8:1:2::1").status == 200)
        #expect(resolve(perAddress, peer: "2001:db8:1:2::2").status == 200)
        #expect(resolve(perAddress, peer: "2001:db8:1:2::1").status == 429)
    }

    @Test func clientIPDoesNotChooseTheBucket() {
        let fixture = fixture(rate: 1, burst: 1)
        #expect(resolve(fixture, peer: "192.0.2.50", query: ["client_ip": "198.51.100.1"]).status == 200)
        #expect(resolve(fixture, peer: "192.0.2.50", query: ["client_ip": "198.51.100.2"]).status == 429)
    }

    @Test func behindATrustedProxyTheForwardedClientIsLimitedNotTheProxy() {
        let fixture = fixture(rate: 1, burst: 1, trustedProxies: [CIDR("10.0.0.0/8")!])
        #expect(resolve(fixture, peer: "10.0.0.1", forwardedFor: "203.0.113.1").status == 200)
        #expect(resolve(fixture, peer: "10.0.0.1", forwardedFor: "203.0.113.1").status == 429)
        #expect(resolve(fixture, peer: "10.0.0.1", forwardedFor: "203.0.113.2").status == 200)
        // An untrusted peer's header is not believed: the peer is the client.
        #expect(resolve(fixture, peer: "192.0.2.9", forwardedFor: "203.0.113.3").status == 200)
        #expect(resolve(fixture, peer: "192.0.2.9", forwardedFor: "203.0.113.4").status == 429)
    }

    @Test func anAccountOverridesTheServiceRate() {
        let off = fixture(rate: 1, burst: 1) { $0.rateLimit = 0 }
        for _ in 0..<10 { #expect(resolve(off, peer: "192.0.2.50").status == 200) }
        let on = fixture(rate: 0, burst: 0) {
            $0.rateLimit = 1; $0.rateBurst = 2
        }
        #expect(resolve(on, peer: "192.0.2.50").status == 200)
        #expect(resolve(on, peer: "192.0.2.50").status == 200)
        #expect(resolve(on, peer: "192.0.2.50").status == 429)
    }

    @Test func probesMetricsAndTheAdminAPIAreNotLimited() {
        let fixture = fixture(rate: 1, burst: 1)
        for _ in 0..<5 {
            #expect(fixture.get("/healthz", peer: "192.0.2.50").status == 200)
            #expect(fixture.get("/metrics", peer: "192.0.2.50").status == 200)
        }
    }

    @Test func requestsToUnknownAccountsShareOneBucketPerClientAndAreCounted() {
        let fixture = fixture(rate: 1, burst: 1)
        #expect(fixture.get("/v1/guess1/resolve", ["host": "a.test"], peer: "192.0.2.50").status == 404)
        #expect(fixture.get("/v1/guess2/resolve", ["host": "a.test"], peer: "192.0.2.50").status == 429)
        let text = MetricsText(fixture.get("/metrics", listener: .ops).text)
        // In the totals (no account label): there is no account to name.
        #expect(text.value("httpdns_rate_limited_total", ["reason": "client_rate"]) == 1)
        #expect(
            text.sum("httpdns_rate_limited_total", ["account": "guess1"]) + text.sum("httpdns_rate_limited_total", ["account": "guess2"])
                == 0)
    }

    @Test func refusalsAreCountedPerAccountAndReason() {
        let fixture = fixture(rate: 1, burst: 1)
        _ = resolve(fixture, peer: "192.0.2.50")
        _ = resolve(fixture, peer: "192.0.2.50")
        _ = resolve(fixture, peer: "192.0.2.50")
        let text = MetricsText(fixture.get("/metrics", listener: .ops).text)
        #expect(text.problems.isEmpty, "\(text.problems)")
        #expect(text.value("httpdns_rate_limited_total", ["account": "default", "reason": "client_rate"]) == 2)
        #expect(text.value("httpdns_rate_limited_total", ["account": "default", "reason": "upstream_budget"]) == 0)
        #expect(text.value("httpdns_http_requests_total", ["code": "429"]) == nil)  // no HTTP front attached here
    }

    /// True when the fast path answered `head` (its response is non-copyable: only its presence counts).
    private func answered(_ fixture: ServiceFixture, _ head: MemoryHead) -> Bool {
        fixture.service.fastResponse(head)?.count != nil
    }

    @Test func theFastPathIsLimitedAndAChargedHitIsNotChargedAgain() {
        let fixture = fixture(rate: 1, burst: 2)
        let head = MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test")], peer: "192.0.2.50")
        #expect(answered(fixture, head))
        #expect(answered(fixture, head))
        // Out of tokens: the fast path leaves the request to the full path, which refuses it.
        #expect(!answered(fixture, head))
        #expect(Exchange(fixture.handle(head.request())).status == 429)
        // A miss takes no token on the fast path: the full path takes the only one.
        fixture.clock.advance(by: 1)
        let miss = MemoryHead("GET", "/v1/default/resolve", [("host", "miss.example.test")], peer: "192.0.2.50")
        #expect(!answered(fixture, miss))
        fixture.upstream.setAnswer("miss.example.test", addresses: ["192.0.2.2"], ttl: 60)
        let exchange = Exchange(fixture.handle(miss.request()), releasing: [fixture.upstream])
        #expect(exchange.status == 200)
        #expect(!answered(fixture, head))
    }

    @Test func aRefusedFastPathRequestIsNotCountedAsACacheHit() {
        let fixture = fixture(rate: 1, burst: 1)
        let head = MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test")], peer: "192.0.2.50")
        #expect(answered(fixture, head))
        #expect(!answered(fixture, head))
        #expect(Exchange(fixture.handle(head.request())).status == 429)
        #expect(fixture.engine.metrics.cacheHits.value == 1)
        #expect(fixture.engine.metrics.clientRateRefusals.value == 1)
    }

    /// Behind a trusted proxy, the hit charges the client `X-Forwarded-For` names, as the general
    /// path does: each client has its own bucket, and the general path sees the same tokens.
    @Test func behindATrustedProxyTheHitChargesTheForwardedClient() {
        let fixture = fixture(rate: 1, burst: 1, trustedProxies: [CIDR("10.0.0.0/8")!])
        func head(_ client: String) -> MemoryHead {
            MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test")], peer: "10.0.0.9", forwardedFor: client)
        }
        #expect(answered(fixture, head("192.0.2.7")))
        #expect(answered(fixture, head("192.0.2.8")))
        #expect(!answered(fixture, head("192.0.2.7")))
        #expect(Exchange(fixture.handle(head("192.0.2.7").request())).status == 429)
        // An untrusted peer's header is not read: its own address is charged.
        let direct = MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test")], peer: "192.0.2.50", forwardedFor: "192.0.2.9")
        #expect(answered(fixture, direct))
        #expect(answered(fixture, head("192.0.2.9")))
    }

    @Test func withLimitsOffTheFastPathAnswersEveryHit() {
        let fixture = fixture(rate: 0, burst: 0)
        let head = MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test")], peer: "192.0.2.50")
        for _ in 0..<100 { #expect(answered(fixture, head)) }
    }

    @Test func anUpstreamBudgetRefusalIs429WithRetryAfterAndCounted() throws {
        let fixture = fixture(rate: 0, burst: 0) { $0.upstreamQPS = 1 }
        fixture.upstream.setAnswer("a.example.test", addresses: ["192.0.2.3"], ttl: 60)
        fixture.upstream.setAnswer("b.example.test", addresses: ["192.0.2.4"], ttl: 60)
        #expect(fixture.get("/v1/default/resolve", ["host": "a.example.test"]).status == 200)
        let refused = fixture.get("/v1/default/resolve", ["host": "b.example.test"])
        #expect(refused.status == 429)
        #expect(refused.errorCode == "RateLimited")
        #expect(refused.response?.headers.contains { $0.0 == "Retry-After" && $0.1 == "1" } == true)
        // A cached name still answers.
        #expect(fixture.get("/v1/default/resolve", ["host": "www.example.test"]).status == 200)
        let text = MetricsText(fixture.get("/metrics", listener: .ops).text)
        #expect(text.value("httpdns_rate_limited_total", ["account": "default", "reason": "upstream_budget"]) == 1)
    }
}

/// `ClientBucketTable`: bounded memory, forgetting full buckets first.
@Suite struct ClientBucketTableTests {
    let now: Timestamp = 1_700_000_000

    @Test func aTableNeverGrowsAndForgetsFullBucketsBeforeActiveOnes() {
        var table = ClientBucketTable(capacity: 8)
        #expect(table.capacity == 8)
        // Eight clients, each with one token used (rate 1, burst 2: full again 1 s later).
        for key in 1...8 { #expect(table.take(UInt64(key), at: now, rate: 1, burst: 2) == .allowed) }
        #expect(table.activeCount(at: now) == 8)
        // A ninth must evict one early: the table is full of active buckets.
        #expect(table.take(9, at: now, rate: 1, burst: 2) == .allowed)
        #expect(table.evictedEarly == 1)
        #expect(table.capacity == 8)
        // Once they are full again, new clients take their slots without early evictions.
        for key in 10...17 { #expect(table.take(UInt64(key), at: now + 5, rate: 1, burst: 2) == .allowed) }
        #expect(table.evictedEarly == 1)
    }

    @Test func aKnownClientKeepsItsBucket() {
        var table = ClientBucketTable(capacity: 64)
        #expect(table.take(42, at: now, rate: 1, burst: 1) == .allowed)
        for key in 100..<120 { _ = table.take(UInt64(key), at: now, rate: 1, burst: 1) }
        #expect(table.take(42, at: now, rate: 1, burst: 1) == .refused(retryAfter: 1))
    }
}
