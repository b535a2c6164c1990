import Foundation
import HTTPDNSTestSupport
import HTTPDNSWire
import Testing

/// RFC 8484 against the real binary, unbound and dnss on loopback. Answers are read by clients
/// nobody here wrote (dnspython's DoH client, curl `--doh-url`); the raw HTTP checks (status,
/// headers, IDs of hand-picked messages) use the service's own libknot wrapper only to make
/// queries and read IDs.
@Suite("RFC 8484")
struct RFC8484Tests {
    static let token = "integration-admin-token-8484"
    static let secret = "rfc8484-secret-integration-01"

    func dnspython(_ service: HTTPDNSDProcess, path: String = "/dns-query") -> DoHTestClient {
        DoHTestClient(url: "http://127.0.0.1:\(service.port)\(path)")
    }

    /// `?dns=` of a query for `name`/`type` with `id`.
    func dnsArgument(_ name: String, type: UInt16, id: UInt16) throws -> String {
        Self.base64URL(try DNSQueryWriter.query(name: name, type: type, id: id))
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test func aAndAAAAOverGETAndPOSTComeFromTheEnginesCache() async throws {
        try await withService { _, service in
            let client = dnspython(service)
            let v4 = try await client.query(TestZone.www, type: "A", post: false)
            #expect(v4.rcode == "NOERROR")
            #expect(v4.id == v4.queryID)
            #expect(v4.answer.map(\.data).sorted() == TestZone.wwwV4)
            #expect(
                v4.answer.allSatisfy { $0.type == "A" && $0.name == "\(TestZone.www)." && $0.ttl > 0 && $0.ttl <= Int(TestZone.wwwTTL) })
            let v6 = try await client.query(TestZone.www, type: "AAAA", post: true)
            #expect(v6.answer.map(\.data) == TestZone.wwwV6, "\(v6)")
            // Asked again, by the other method: from the cache, counted as hits like /v1.
            #expect(try await client.query(TestZone.www, type: "A", post: true).answer.map(\.data).sorted() == TestZone.wwwV4)
            #expect(try await client.query(TestZone.www, type: "AAAA", post: false).answer.map(\.data) == TestZone.wwwV6)
            let stats = try await service.client.get("/v1/default/stats")
            for type in [1, 28] {
                let record = stats.json.array?.first { $0["domain"]?.string == TestZone.www && $0["type"]?.int == type }
                #expect(record?["requestPDnsNum"]?.int == 1, "\(stats)")
                #expect(record?["cacheDnsNum"]?.int == 1, "\(stats)")
            }
            // The same cache as API v1: /v1 resolve is a hit now.
            let v1 = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            #expect(v1.json["source"]?.string == "cache", "\(v1)")
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_request_duration_seconds_count", ["protocol": "rfc8484"]) == 4)
        }
    }

    @Test func nxdomainIsRcode3AndTheForwardedOneCarriesTheSOA() async throws {
        try await withService { _, service in
            let client = dnspython(service)
            let missing = try await client.query(TestZone.nxdomain(), type: "A", post: true)
            #expect(missing.rcode == "NXDOMAIN", "\(missing)")
            #expect(missing.answer.isEmpty)
            let forwarded = try await client.query(TestZone.nxdomain(), type: "TXT", post: false)
            #expect(forwarded.rcode == "NXDOMAIN", "\(forwarded)")
            #expect(forwarded.authority.first?.type == "SOA", "\(forwarded)")
            #expect(forwarded.authority.first?.name == "\(TestZone.origin).")
        }
    }

    /// RFC 2308 §3: a negative answer the engine gives (NXDOMAIN, and NODATA: the AAAA of a
    /// name with only an A) carries the zone's SOA in the authority section, on the miss and on
    /// the cache hit alike, with a TTL no larger than the negative TTL (the zone's MINIMUM 45
    /// capped by `maxNegativeCache` 30), as dnspython reads it. From the RFC 8484 upstream
    /// (dnss) and from the DoH JSON one (its `Authority`).
    @Test(arguments: ["doh", "json"])
    func negativeAnswersCarryTheZoneSOAOnTheMissAndOnTheHit(upstream: String) async throws {
        try await withService(upstreams: { [upstream == "json" ? $0.json.upstreamSpec : $0.dnss.upstreamSpec] }) { _, service in
            let client = dnspython(service)
            let missing = TestZone.nxdomain("soa")
            for (name, type, rcode) in [(missing, "A", "NXDOMAIN"), (TestZone.v4Only, "AAAA", "NOERROR")] {
                for post in [true, false] {
                    let reply = try await client.query(name, type: type, post: post)
                    #expect(reply.rcode == rcode, "\(reply)")
                    #expect(reply.answer.isEmpty, "\(reply)")
                    #expect(reply.authority.count == 1, "\(reply)")
                    let soa = try #require(reply.authority.first)
                    #expect(soa.type == "SOA")
                    #expect(soa.name == "\(TestZone.origin).")
                    #expect(soa.data == "ns.example.test. hostmaster.example.test. 1 3600 1200 604800 \(TestZone.soaMinimum)")
                    #expect(soa.ttl >= 0 && soa.ttl <= 30, "\(soa)")
                }
            }
            // The second of each was a cache hit.
            let stats = try await service.client.get("/v1/default/stats")
            for (name, type) in [(missing, 1), (TestZone.v4Only, 28)] {
                let record = stats.json.array?.first { $0["domain"]?.string == name && $0["type"]?.int == type }
                #expect(record?["requestPDnsNum"]?.int == 1, "\(stats)")
                #expect(record?["cacheDnsNum"]?.int == 1, "\(stats)")
            }
        }
    }

    @Test func txtAndMXGoThroughTheForwardPath() async throws {
        try await withService { _, service in
            let client = dnspython(service, path: "/v1/default/dns-query")
            let txt = try await client.query(TestZone.txtName, type: "TXT", post: true)
            #expect(txt.rcode == "NOERROR")
            #expect(txt.answer.map(\.data) == [TestZone.txtData], "\(txt)")
            let mx = try await client.query(TestZone.origin, type: "MX", post: false)
            #expect(mx.answer.map(\.data) == [TestZone.mxData], "\(mx)")
            #expect(mx.answer.first?.ttl == Int(TestZone.mxTTL))
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_dns_message_forwarded_total", ["outcome": "answered"]) == 2)
            // Nothing of it is in the engine's cache or statistics: only A and AAAA are.
            let stats = try await service.client.get("/v1/default/stats")
            #expect(stats.json.array?.contains { $0["domain"]?.string == TestZone.txtName } == false, "\(stats)")
        }
    }

    /// An account whose upstream speaks only A and AAAA (the DoH JSON API) forwards the other
    /// questions to its local DNS fallback (c-ares, `ares_send`).
    @Test func withoutADoHUpstreamOtherTypesGoToTheLocalDNSFallback() async throws {
        try await withService(upstreams: { [$0.json.upstreamSpec] }) { _, service in
            let client = dnspython(service)
            let txt = try await client.query(TestZone.txtName, type: "TXT", post: true)
            #expect(txt.answer.map(\.data) == [TestZone.txtData], "\(txt)")
            let v4 = try await client.query(TestZone.v4Only, type: "A", post: false)
            #expect(v4.answer.map(\.data) == TestZone.v4OnlyV4, "\(v4)")
        }
        try await withService(upstreams: { [$0.json.upstreamSpec] }, localDNSFallback: false) { _, service in
            let txt = try await dnspython(service).query(TestZone.txtName, type: "TXT", post: true)
            #expect(txt.rcode == "SERVFAIL", "\(txt)")
        }
    }

    /// The query's EDNS Client Subnet picks the per-network cache of an `ispEnable` account: it
    /// reaches the (JSON) upstream as the client's network, and a second client of the same
    /// network is a hit.
    @Test func theClientSubnetFeedsThePerNetworkCache() async throws {
        try await withService(
            upstreams: { [$0.json.upstreamSpec] },
            configure: { servers, options in
                options.config = [
                    "accounts": ["default": loopbackAccount(servers, upstreams: [servers.json.upstreamSpec], ["ispEnable": true])]
                ]
            }
        ) { servers, service in
            let name = TestZone.unique("ecs")
            let client = dnspython(service)
            for subnet in ["198.51.100.77/24", "198.51.100.5/32", "203.0.113.9/24"] {
                let reply = try await client.query(name, type: "A", post: true, ecs: subnet)
                #expect(reply.answer.map(\.data) == TestZone.wildV4, "\(reply)")
            }
            let asked = try await servers.json.requests(for: name).map { $0.query["edns_client_subnet"] }
            #expect(asked == ["198.51.100.0/24", "203.0.113.0/24"])
        }
    }

    @Test func theIDIsEchoedAndCacheControlIsTheSmallestTTL() async throws {
        try await withService { _, service in
            let get = try await service.client.get(
                "/dns-query?dns=\(try dnsArgument(TestZone.cnameChain, type: 1, id: 0xBEEF))",
                headers: ["Accept": "application/dns-message"])
            #expect(get.status == 200, "\(get)")
            #expect(get.header("content-type") == "application/dns-message")
            #expect(get.header("cache-control") == "max-age=\(TestZone.cnameChainTTL)", "\(get.headers)")
            let reply = try DNSReplySummary.parse(get.body)
            #expect(reply.id == 0xBEEF)
            #expect(reply.answerCount == TestZone.wwwV4.count)
            let query = try DNSQueryWriter.query(name: TestZone.txtName, type: 16, id: 0x0102)
            let post = try await service.client.request(
                "POST", "/dns-query", headers: ["Content-Type": "application/dns-message", "Accept": "application/dns-message"], body: query
            )
            #expect(post.status == 200, "\(post)")
            #expect(post.header("cache-control") == "max-age=\(TestZone.txtTTL)", "\(post.headers)")
            #expect(try DNSReplySummary.parse(post.body).id == 0x0102)
        }
    }

    @Test func malformedMessagesAre400AndCounted() async throws {
        try await withService { _, service in
            let garbage: [UInt8] = [0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0x3F, 0x41]
            let reply = Array(try DNSQueryWriter.query(name: TestZone.www, type: 1, id: 9)).enumerated().map { $0 == 2 ? $1 | 0x80 : $1 }
            for dns in [Self.base64URL(garbage), Self.base64URL(reply)] {
                expectError(try await service.client.get("/dns-query?dns=\(dns)"), status: 400, code: "InvalidDNSMessage")
            }
            let post = try await service.client.request(
                "POST", "/v1/default/dns-query", headers: ["Content-Type": "application/dns-message"], body: garbage)
            expectError(post, status: 400, code: "InvalidDNSMessage")
            expectError(try await service.client.get("/dns-query?dns=not*base64"), status: 400, code: "InvalidDNSMessage")
            expectError(try await service.client.get("/dns-query"), status: 400, code: "MissingArgument")
            let wrongType = try await service.client.request(
                "POST", "/dns-query", headers: ["Content-Type": "text/plain"], body: try DNSQueryWriter.query(name: TestZone.www, type: 1))
            expectError(wrongType, status: 415, code: "UnsupportedMediaType")
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_dns_message_malformed_total") == 3)
            // The DoH JSON API keeps GET /dns-query with Accept: application/dns-json.
            let json = try await service.client.get("/dns-query?name=\(TestZone.www)&type=A", headers: ["Accept": "application/dns-json"])
            #expect(json.json["Answer"]?.array?.compactMap { $0["data"]?.string }.sorted() == TestZone.wwwV4, "\(json)")
        }
    }

    @Test func anAccountRequiringSignaturesRefusesUnsignedQueriesAndAnswersSignedOnes() async throws {
        try await withSignedAccountService(id: "shop", secret: Self.secret, adminToken: Self.token) { _, service in
            let dns = try dnsArgument(TestZone.www, type: 1, id: 77)
            expectError(try await service.client.get("/v1/shop/dns-query?dns=\(dns)"), status: 401, code: "Unauthorized")
            // A missing account is refused as the signed one is (AccountHidingTests).
            expectError(try await service.client.get("/v1/nosuch/dns-query?dns=\(dns)"), status: 401, code: "Unauthorized")
            let signed = try ClientRequestSigner.sign(
                method: "GET", path: "/v1/shop/dns-query", args: [("dns", dns)], secret: Self.secret, t: ClientRequestSigner.expiry(in: 60))
            let get = try await service.client.get("/v1/shop/dns-query?\(signed.signedQuery(kid: "k1"))")
            #expect(get.status == 200, "\(get)")
            #expect(try DNSReplySummary.parse(get.body).id == 77)
            let body = try DNSQueryWriter.query(name: TestZone.www, type: 28, id: 78)
            let signedPost = try ClientRequestSigner.sign(
                method: "POST", path: "/v1/shop/dns-query", body: body, secret: Self.secret, t: ClientRequestSigner.expiry(in: 60))
            let post = try await service.client.request(
                "POST", "/v1/shop/dns-query",
                headers: ["Content-Type": "application/dns-message", "Authorization": signedPost.authorization(kid: "k1")], body: body)
            #expect(post.status == 200, "\(post)")
            #expect(try DNSReplySummary.parse(post.body).answerCount == TestZone.wwwV6.count)
        }
    }

    /// curl resolves a name through httpdnsd's HTTPS listener (`--doh-url`, the test CA) and
    /// fetches from a loopback HTTP server by it; dnspython asks over the same TLS listener.
    @Test func curlAndDnspythonResolveThroughTheTLSListener() async throws {
        let certificates = try await TestCertificates.make()
        let (certificate, key) = try await certificates.issue("server", serial: "8484")
        try await withService(configure: { _, options in
            options.harnessListen = ("--listen-plain", "HTTPDNS_LISTEN_PLAIN")
            options.listen("--listen", port: "https")
            options.arguments += ["--tls-cert", certificate, "--tls-key", key]
        }) { servers, service in
            let tlsPort = try service.port(named: "https")
            let url = "http://\(TestZone.loopbackName):\(servers.json.port)/resolve?name=\(TestZone.www)"
            let (status, output) = try await ExternalTool.run(
                "curl",
                [
                    "-sS", "--max-time", "10", "--doh-url", "https://127.0.0.1:\(tlsPort)/dns-query", "--cacert", certificates.caPath,
                    "-w", "\n%{http_code} %{remote_ip}", url,
                ], timeout: 20)
            #expect(status == 0, "\(output)")
            #expect(output.hasSuffix("200 127.0.0.1"), "\(output)")
            #expect(try await servers.json.requests().contains { $0.path == "/resolve" && $0.query["name"] == TestZone.www })
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_request_duration_seconds_count", ["protocol": "rfc8484"]) >= 1)
            let tls = DoHTestClient(url: "https://127.0.0.1:\(tlsPort)/dns-query", caPath: certificates.caPath)
            for post in [false, true] {
                let reply = try await tls.query(TestZone.v4Only, type: "A", post: post)
                #expect(reply.answer.map(\.data) == TestZone.v4OnlyV4, "\(reply)")
            }
        }
    }
}
