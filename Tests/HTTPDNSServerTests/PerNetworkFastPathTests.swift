import Foundation
import HTTPDNSCore
import HTTPDNSCrypto
import HTTPDNSTestSupport
import HTTPDNSWire
import Testing

@testable import HTTPDNSServer

/// The fast path of accounts with `ispEnable` (a cache per client network): every format's hit
/// is looked up under the network the general path picks for the same request (the format's
/// address argument, an RFC 8484 query's Client Subnet, else the peer after the trusted-proxy
/// rule) and answered with the general path's bytes; a client of one network never gets another
/// network's answer; what the general path refuses or must resolve is left to it.
@Suite struct PerNetworkFastPathTests {
    static let host = "two.example.test"
    /// Clients of the three networks that hold an answer, and the address each network's answer has.
    static let clients: [(client: String, answer: String)] = [
        ("198.51.100.7", "127.0.0.11"), ("203.0.113.9", "127.0.0.22"), ("2001:db8:aa:bb01::9", "127.0.0.33"),
    ]
    /// The answer cached without a network (a client with no known address).
    static let networkless = "127.0.0.99"
    /// What the upstream answers a miss.
    static let resolved = "127.0.0.44"
    static let allAnswers = clients.map(\.answer) + [networkless, resolved]
    /// A trusted proxy (10.0.0.0/8), and a peer of a network that has no answer.
    static let proxy = "10.0.0.1", elsewhere = "192.0.2.1"

    private func fixture(_ change: (inout AccountConfig) -> Void = { _ in }) -> ServiceFixture {
        let fixture = ServiceFixture(
            config: .test {
                $0.ispEnable = true
                change(&$0)
            },
            limits: HTTPDNSService.Limits(trustedProxies: [CIDR("10.0.0.0/8")!]))
        let host = HostName(Self.host)!
        fixture.engine.restore([
            (CacheKey(host: host, family: .a, network: "198.51.100.0/24"), fixture.entry(["127.0.0.11"], ttl: 300)),
            (CacheKey(host: host, family: .a, network: "203.0.113.0/24"), fixture.entry(["127.0.0.22"], ttl: 300)),
            (CacheKey(host: host, family: .a, network: "2001:db8:aa:bb00::/56"), fixture.entry(["127.0.0.33"], ttl: 300)),
            (CacheKey(host: host, family: .a, network: ""), fixture.entry([Self.networkless], ttl: 300)),
        ])
        fixture.clock.advance(by: 2)
        return fixture
    }

    /// The formats the fast path serves, by route.
    enum Format: String, CaseIterable {
        case v1, emas, emasSigned, json, jsonAtDNSQuery, rfc8484, rfc8484Account
    }

    /// How a request names its client.
    enum Via: String, CaseIterable {
        /// The format's own: `client_ip`, `ip`, `edns_client_subnet`, the query's Client Subnet (the peer is elsewhere).
        case argument
        /// The TCP peer.
        case peer
        /// `X-Forwarded-For` written by a trusted proxy (the peer).
        case trustedProxy
    }

    /// An A query for `name`, with a Client Subnet of `subnet` when given (source prefix
    /// `prefix`, else 24 for IPv4 and 56 for IPv6).
    private static func dns(_ name: String, subnet: String? = nil, prefix: UInt8? = nil) throws -> String {
        let clientSubnet = subnet.flatMap(IPAddress.init).map {
            DNSQueryMessage.ClientSubnet(
                family: $0.family == .a ? 1 : 2, sourcePrefixLength: prefix ?? ($0.family == .a ? 24 : 56), scopePrefixLength: 0,
                address: $0.bytes)
        }
        return Base64URL.encode(try DNSQueryWriter.query(name: name, type: 1, id: 0x4242, clientSubnet: clientSubnet))
    }

    /// `format`'s request for `host` (type A) from `client`, named `via`.
    private static func head(_ format: Format, via: Via, client: String, host: String = host) throws -> MemoryHead {
        let peer = via == .peer ? client : via == .trustedProxy ? proxy : elsewhere
        let forwardedFor = via == .trustedProxy ? "\(elsewhere), \(client)" : nil
        let argument = via == .argument ? client : nil
        var accept: String?
        let (path, arguments): (String, [(String, String?)])
        switch format {
        case .v1:
            (path, arguments) = ("/v1/default/resolve", [("host", host), ("type", "A")] + (argument.map { [("client_ip", $0)] } ?? []))
        case .emas: (path, arguments) = ("/default/d", [("host", host)] + (argument.map { [("ip", $0)] } ?? []))
        case .emasSigned:
            let expiry = "1700000600"  // the fixture's manual clock is at 1 700 000 000
            let signature = try EMASSignature.signature(hosts: host, secret: secret, expiry: expiry)
            (path, arguments) = (
                "/default/sign_d", [("host", host), ("t", expiry), ("s", signature)] + (argument.map { [("ip", $0)] } ?? [])
            )
        case .json, .jsonAtDNSQuery:
            (path, arguments) = (
                format == .json ? "/resolve" : "/dns-query", [("name", host)] + (argument.map { [("edns_client_subnet", $0)] } ?? [])
            )
            if format == .jsonAtDNSQuery { accept = "application/dns-json" }
        case .rfc8484, .rfc8484Account:
            (path, arguments) = (format == .rfc8484 ? "/dns-query" : "/v1/default/dns-query", [("dns", try dns(host, subnet: argument))])
        }
        return MemoryHead("GET", path, arguments, peer: peer, accept: accept, forwardedFor: forwardedFor)
    }

    /// What the fast path answered (body, content type, headers), nil when it left the request.
    private func fast(_ fixture: ServiceFixture, _ head: MemoryHead) -> (body: [UInt8], contentType: String, headers: [String])? {
        guard let response = fixture.service.fastResponse(head) else { return nil }
        return (response.body, response.contentType ?? HTTPResponse.jsonType, response.headers.map { "\($0.0): \($0.1)" })
    }

    /// The general path's response to the same request, when it answers at once.
    private func general(_ fixture: ServiceFixture, _ head: MemoryHead) -> ServerResponse? {
        guard case .response(let response) = fixture.service.handle(head.request()) else { return nil }
        return response
    }

    /// Which of the seeded answers' addresses `body` holds (as text, or as A record data).
    private static func answers(in body: [UInt8]) -> [String] {
        let text = String(decoding: body, as: UTF8.self)
        return allAnswers.filter { address in
            let bytes = IPAddress(address)!.bytes
            return text.contains("\"\(address)\"")
                || (0...(max(0, body.count - 4))).contains { body.count >= 4 && Array(body[$0..<$0 + 4]) == bytes }
        }
    }

    /// The client key `sign_d` requests are signed with (the account of `emasSigned` has it).
    private static let secret = "0123456789abcdef0123"

    private func fixture(for format: Format) -> ServiceFixture {
        guard format == .emasSigned else { return fixture() }
        return fixture { $0.clientKeys = [ClientKey(id: "k1", secret: Self.secret, role: .resolve)] }
    }

    @Test(arguments: Format.allCases, Via.allCases)
    func aHitIsTheGeneralPathsAnswerForTheClientsOwnNetwork(format: Format, via: Via) throws {
        let fixture = fixture(for: format)
        for (client, expected) in Self.clients {
            let head = try Self.head(format, via: via, client: client)
            let hits = fixture.engine.metrics.cacheHits.value
            let answer = try #require(fast(fixture, head), "\(format) via \(via) from \(client): the fast path did not answer the hit")
            #expect(fixture.engine.metrics.cacheHits.value == hits + 1)
            #expect(
                Self.answers(in: answer.body) == [expected],
                "\(format) via \(via) from \(client): \(String(decoding: answer.body, as: UTF8.self))")
            let full = try #require(general(fixture, head), "the general path deferred a hit")
            #expect(full.status == 200)
            #expect(
                full.body == answer.body, "\(String(decoding: full.body, as: UTF8.self)) vs \(String(decoding: answer.body, as: UTF8.self))"
            )
            #expect(full.contentType == answer.contentType)
            #expect(full.headers.map { "\($0.0): \($0.1)" } == answer.headers)
        }
    }

    /// Requests whose client the general path picks in a less usual way: each gets the same
    /// answer on both paths, the one of the network named.
    @Test(
        arguments: [
            // EMAS: an `ip` that is no address is not an error; the peer counts (and is echoed).
            ("/default/d", [("host", host), ("ip", "not-an-address")], "203.0.113.9", nil, "127.0.0.22"),
            ("/default/d", [("host", host), ("ip", "198.51.100.200")], proxy, "203.0.113.9", "127.0.0.11"),
            // `X-Forwarded-For` from a peer that is not a trusted proxy is not believed.
            ("/v1/default/resolve", [("host", host), ("type", "A")], "203.0.113.9", "198.51.100.7", "127.0.0.22"),
            ("/default/d", [("host", host)], "203.0.113.9", "198.51.100.7", "127.0.0.22"),
            ("/resolve", [("name", host)], "203.0.113.9", "198.51.100.7", "127.0.0.22"),
            // Every address a trusted proxy added is skipped; the first untrusted one from the right counts.
            ("/v1/default/resolve", [("host", host), ("type", "A")], proxy, "198.51.100.7, 10.0.0.2", "127.0.0.11"),
            // The Client Subnet argument wins over the peer, its prefix whatever it is.
            ("/resolve", [("name", host), ("edns_client_subnet", "203.0.113.0/24")], "198.51.100.7", nil, "127.0.0.22"),
            ("/resolve", [("name", host), ("edns_client_subnet", "2001:db8:aa:bb01::/64")], "198.51.100.7", nil, "127.0.0.33"),
            // RFC 8484 without a Client Subnet: `client_ip` as on API v1.
            ("/dns-query", [("dns", try! dns(host)), ("client_ip", "198.51.100.7")], elsewhere, nil, "127.0.0.11"),
            ("/dns-query", [("dns", try! dns(host))], "203.0.113.9", nil, "127.0.0.22"),
            // A Client Subnet of source prefix 0 names no network: the answer without one (scope 0).
            ("/dns-query", [("dns", try! dns(host, subnet: "198.51.100.0", prefix: 0))], "203.0.113.9", nil, networkless),
            // No address known at all: the answer without a network.
            ("/v1/default/resolve", [("host", host), ("type", "A")], nil, nil, networkless),
            ("/default/d", [("host", host)], nil, nil, networkless),
        ] as [(String, [(String, String?)], String?, String?, String)])
    func unusualClientsGetTheSameAnswerOnBothPaths(
        path: String, arguments: [(String, String?)], peer: String?, forwardedFor: String?, expected: String
    ) throws {
        let fixture = fixture()
        let head = MemoryHead("GET", path, arguments, peer: peer, forwardedFor: forwardedFor)
        let answer = try #require(fast(fixture, head), "the fast path did not answer the hit")
        #expect(Self.answers(in: answer.body) == [expected], "\(String(decoding: answer.body, as: UTF8.self))")
        let full = try #require(general(fixture, head))
        #expect(
            full.body == answer.body, "\(String(decoding: full.body, as: UTF8.self)) vs \(String(decoding: answer.body, as: UTF8.self))")
        #expect(full.headers.map { "\($0.0): \($0.1)" } == answer.headers)
    }

    @Test func anEMASAnswerEchoesTheClientTheNetworkWasChosenFor() throws {
        let fixture = fixture()
        let head = MemoryHead("GET", "/default/d", [("host", Self.host)], peer: Self.proxy, forwardedFor: "2001:db8:aa:bb01::9")
        let body = String(decoding: try #require(fast(fixture, head)).body, as: UTF8.self)
        #expect(body.contains(#""client_ip":"2001:db8:aa:bb01::9""#), "\(body)")
        #expect(body.contains("127.0.0.33"), "\(body)")
    }

    /// What the fast path must not answer is left to the general path, which writes its error (or
    /// resolves the miss): nothing is counted as a hit on the way.
    @Test(
        arguments: [
            ("/v1/default/resolve", [("host", host), ("client_ip", "not-an-address")], 400),
            ("/v1/default/resolve", [("host", host), ("client_ip", "")], 400),
            ("/resolve", [("name", host), ("edns_client_subnet", "nonsense")], 400),
            ("/resolve", [("name", host), ("edns_client_subnet", "198.51.100.7/33")], 400),
            ("/dns-query", [("dns", "AAAA")], 400),
        ] as [(String, [(String, String?)], Int)])
    func aRequestTheGeneralPathRefusesGetsItsError(path: String, arguments: [(String, String?)], status: Int) throws {
        let fixture = fixture()
        let head = MemoryHead("GET", path, arguments, peer: "198.51.100.7")
        #expect(fast(fixture, head) == nil)
        #expect(fixture.engine.metrics.cacheHits.value == 0)
        #expect(general(fixture, head)?.status == status)
    }

    /// A client of a network that has no answer misses, whatever other networks (or the entry
    /// without a network) hold: the general path resolves it for that network.
    @Test(arguments: Format.allCases.filter { $0 != .emasSigned })
    func aNetworkWithoutAnAnswerIsAMissNotAnotherNetworksHit(format: Format) throws {
        let fixture = fixture()
        fixture.upstream.setAnswer(Self.host, addresses: [Self.resolved], ttl: 300)
        let head = try Self.head(format, via: .peer, client: Self.elsewhere)
        #expect(fast(fixture, head) == nil)
        #expect(fixture.engine.metrics.cacheHits.value == 0)
        let exchange = Exchange(fixture.service.handle(head.request()), releasing: fixture.upstreams + [fixture.fallback])
        #expect(exchange.response?.source == .upstream)
        #expect(Self.answers(in: exchange.response?.body ?? []) == [Self.resolved], "the general path served another network's answer")
        // Now that network has an answer of its own, and the fast path serves it.
        let answer = try #require(fast(fixture, head))
        #expect(Self.answers(in: answer.body) == [Self.resolved])
    }

    /// A miss the fast path looks up itself is resolved for the network the general path picks
    /// for the same request (the same Client Subnet goes upstream) and stored under it: the same
    /// request is then that network's hit, and a client of another network still misses.
    @Test(arguments: Format.allCases.filter { $0 != .emasSigned }, Via.allCases)
    func aMissIsResolvedAndStoredForTheNetworkTheGeneralPathPicks(format: Format, via: Via) throws {
        let fast = fixture(), full = fixture()
        for fixture in [fast, full] { fixture.upstream.setAnswer(Self.host, addresses: [Self.resolved], ttl: 300) }
        let head = try Self.head(format, via: via, client: "198.18.0.7")
        guard case .lookup(let result)? = fast.service.fastPath(head) else {
            Issue.record("the fast path left a miss to the general path")
            return
        }
        let answer = Exchange(result, releasing: fast.upstreams + [fast.fallback]).awaited()
        #expect(Self.answers(in: answer.response?.body ?? []) == [Self.resolved])
        _ = Exchange(full.service.handle(head.request()), releasing: full.upstreams + [full.fallback]).awaited()
        #expect(fast.upstream.queries.map(\.clientSubnet) == full.upstream.queries.map(\.clientSubnet))
        #expect(fast.upstream.queries.first?.clientSubnet?.hasPrefix("198.18.0.0/") == true)
        #expect(Self.answers(in: try #require(self.fast(fast, head)).body) == [Self.resolved])
        #expect(self.fast(fast, try Self.head(format, via: via, client: "198.19.0.7")) == nil)
    }
}
