import Foundation
import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSTestSupport
import Testing

/// Which network a request belongs to (`client_ip`, `X-Forwarded-For` from trusted proxies, the
/// peer), and that the engine receives it: per-network cache keys and ECS with `ispEnable`.
@Suite struct ClientNetworkSelectionTests {
    static let host = "www.example.test"
    static let resolvePath = "/v1/default/resolve"

    /// A service trusting 10.0.0.0/8 and ::1 as proxies, with `ispEnable` as given.
    private func fixture(ispEnable: Bool = true) -> ServiceFixture {
        let fixture = ServiceFixture(
            config: .test { $0.ispEnable = ispEnable },
            limits: HTTPDNSService.Limits(trustedProxies: ["10.0.0.0/8", "::1"].compactMap { CIDR($0) }))
        fixture.upstream.setAnswer(Self.host, addresses: ["127.0.0.11"], ttl: 300)
        return fixture
    }

    private func request(
        _ path: String = resolvePath, clientIP: String? = nil, peer: String?, forwardedFor: String? = nil
    ) -> HTTPRequest {
        var query = ["host": Self.host, "type": "A"]
        query["client_ip"] = clientIP
        return HTTPRequest(method: "GET", path: path, query: query, peer: peer, forwardedFor: forwardedFor)
    }

    private func send(_ fixture: ServiceFixture, _ request: HTTPRequest) -> Exchange {
        Exchange(fixture.handle(request), releasing: fixture.upstreams + [fixture.fallback])
    }

    // MARK: The choice

    @Test func clientIPParameterChoosesTheNetwork() {
        let service = fixture().service
        #expect(service.clientNetwork(of: request(clientIP: "198.51.100.7", peer: "192.0.2.1")) == "198.51.100.0/24")
        #expect(
            service.clientNetwork(of: request(clientIP: "2001:db8:aa:bb01::9", peer: "10.0.0.1", forwardedFor: "203.0.113.9"))
                == "2001:db8:aa:bb00::/56")
    }

    @Test func peerChoosesTheNetworkWhenItIsNoTrustedProxy() {
        let service = fixture().service
        #expect(service.clientNetwork(of: request(peer: "192.0.2.1")) == "192.0.2.0/24")
        // A forged X-Forwarded-For from an untrusted peer changes nothing.
        #expect(service.clientNetwork(of: request(peer: "192.0.2.1", forwardedFor: "203.0.113.9")) == "192.0.2.0/24")
        #expect(service.clientNetwork(of: request(peer: "2001:db8:1:2ff::1")) == "2001:db8:1:200::/56")
    }

    @Test func trustedProxyForwardsTheRightMostUntrustedAddress() {
        let service = fixture().service
        #expect(service.clientNetwork(of: request(peer: "10.0.0.1", forwardedFor: "203.0.113.9")) == "203.0.113.0/24")
        #expect(service.clientNetwork(of: request(peer: "::1", forwardedFor: "1.1.1.1, 203.0.113.9, 10.9.9.9")) == "203.0.113.0/24")
        #expect(service.clientNetwork(of: request(peer: "10.0.0.1")) == "10.0.0.0/24")
    }

    @Test func withoutTrustedProxiesForwardedForIsNeverRead() {
        let service = ServiceFixture().service
        #expect(service.clientNetwork(of: request(peer: "10.0.0.1", forwardedFor: "203.0.113.9")) == "10.0.0.0/24")
    }

    @Test func noAddressGivesNoNetwork() {
        #expect(fixture().service.clientNetwork(of: request(peer: nil)) == "")
    }

    // MARK: Through the engine

    @Test func ispEnabledAccountSendsTheClientNetworkUpstream() throws {
        let fixture = fixture()
        let exchange = send(fixture, request(clientIP: "198.51.100.7", peer: "127.0.0.1"))
        #expect(exchange.status == 200)
        let query = try #require(fixture.upstream.queries.last)
        #expect(query.clientSubnet == "198.51.100.0/24")
    }

    @Test func forwardedForOfATrustedProxyReachesTheUpstream() throws {
        let fixture = fixture()
        #expect(send(fixture, request(peer: "10.0.0.1", forwardedFor: "203.0.113.9")).status == 200)
        #expect(try #require(fixture.upstream.queries.last).clientSubnet == "203.0.113.0/24")
    }

    @Test func eachNetworkHasItsOwnCacheEntryAndStatsRecord() throws {
        let fixture = fixture()
        #expect(send(fixture, request(clientIP: "198.51.100.7", peer: "127.0.0.1")).status == 200)
        #expect(send(fixture, request(clientIP: "198.51.100.200", peer: "127.0.0.1")).object["source"] as? String == "cache")
        #expect(send(fixture, request(clientIP: "203.0.113.9", peer: "127.0.0.1")).object["source"] as? String == "upstream")
        #expect(fixture.upstream.queries.map(\.clientSubnet) == ["198.51.100.0/24", "203.0.113.0/24"])

        let entries = try #require(fixture.get("/v1/default/cache").object["entries"] as? [[String: Any]])
        #expect(Set(entries.compactMap { $0["network"] as? String }) == ["198.51.100.0/24", "203.0.113.0/24"])

        let records = try #require(fixture.get("/v1/default/stats").json as? [[String: Any]])
        #expect(Set(records.compactMap { $0["sp"] as? String }) == ["198.51.100.0/24", "203.0.113.0/24"])
    }

    /// The EMAS API's `ip` argument, and its peer after the trusted-proxy rule, pick the same
    /// network and are echoed as `client_ip`.
    @Test func theEMASPathsChooseTheNetworkByIPOrTrustedProxy() throws {
        let fixture = fixture()
        let byIP = send(
            fixture, HTTPRequest(method: "GET", path: "/default/d", query: ["host": Self.host, "ip": "198.51.100.7"], peer: "127.0.0.1"))
        #expect(byIP.object["client_ip"] as? String == "198.51.100.7")
        #expect(try #require(fixture.upstream.queries.last).clientSubnet == "198.51.100.0/24")
        let proxied = send(
            fixture,
            HTTPRequest(
                method: "GET", path: "/default/d", query: ["host": Self.host], peer: "10.0.0.1", forwardedFor: "203.0.113.9"))
        #expect(proxied.object["client_ip"] as? String == "203.0.113.9")
        #expect(try #require(fixture.upstream.queries.last).clientSubnet == "203.0.113.0/24")
        let forged = send(
            fixture,
            HTTPRequest(
                method: "GET", path: "/default/d", query: ["host": Self.host], peer: "192.0.2.1", forwardedFor: "203.0.113.9"))
        #expect(forged.object["client_ip"] as? String == "192.0.2.1")
        // Same network as the first request: a hit, no new upstream query.
        let again = send(
            fixture, HTTPRequest(method: "GET", path: "/default/d", query: ["host": Self.host, "ip": "198.51.100.99"], peer: "127.0.0.1"))
        #expect(again.status == 200)
        #expect(fixture.upstream.queries.map(\.clientSubnet) == ["198.51.100.0/24", "203.0.113.0/24", "192.0.2.0/24"])
    }

    @Test func cacheLookupUsesTheRequestsNetwork() {
        let fixture = fixture()
        _ = send(fixture, request(clientIP: "198.51.100.7", peer: "127.0.0.1"))
        #expect(send(fixture, request("/v1/default/cache", clientIP: "198.51.100.99", peer: "127.0.0.1")).status == 200)
        #expect(send(fixture, request("/v1/default/cache", peer: "10.0.0.1", forwardedFor: "198.51.100.1")).status == 200)
        #expect(send(fixture, request("/v1/default/cache", clientIP: "203.0.113.9", peer: "127.0.0.1")).status == 404)
    }

    @Test func withoutIspEnableNoClientAddressLeavesTheService() throws {
        let fixture = fixture(ispEnable: false)
        #expect(send(fixture, request(clientIP: "198.51.100.7", peer: "127.0.0.1")).status == 200)
        #expect(send(fixture, request(peer: "10.0.0.1", forwardedFor: "203.0.113.9")).object["source"] as? String == "cache")
        #expect(fixture.upstream.totalCalls == 1)
        #expect(fixture.upstream.queries.allSatisfy { $0.clientSubnet == nil })
        let entries = try #require(fixture.get("/v1/default/cache").object["entries"] as? [[String: Any]])
        #expect(entries.count == 1)
        #expect(entries.allSatisfy { $0["network"] == nil })
        let records = try #require(fixture.get("/v1/default/stats").json as? [[String: Any]])
        #expect(records.compactMap { $0["sp"] as? String } == ["default"])
    }

    // MARK: Over a socket

    @Test func everyForwardedForFieldIsReadOverTheSocket() throws {
        let fixture = ServiceFixture(
            config: .test { $0.ispEnable = true },
            limits: HTTPDNSService.Limits(trustedProxies: [CIDR("127.0.0.1")!]))
        fixture.upstream.setAnswer(Self.host, addresses: ["127.0.0.11"], ttl: 300)
        let server = HTTPServer(options: HTTPServerOptions(host: "127.0.0.1", port: 0, threads: 1)) { [service = fixture.service] in
            service.handle($0)
        }
        let port = try server.start()
        defer { server.stop(grace: 0) }
        let connection = try RawHTTPConnection(port: port)
        // Two fields form one list (RFC 9110 §5.3); the right-most untrusted address wins.
        let forwarded = try connection.request(
            "GET", "\(Self.resolvePath)?host=\(Self.host)&type=A",
            headers: [("X-Forwarded-For", "198.51.100.1"), ("x-forwarded-for", "203.0.113.9, 127.0.0.1")])
        #expect(forwarded.status == 200)
        let direct = try connection.request("GET", "\(Self.resolvePath)?host=\(Self.host)&type=A")
        #expect(direct.status == 200)
        #expect(fixture.upstream.queries.map(\.clientSubnet) == ["203.0.113.0/24", "127.0.0.0/24"])
    }
}
