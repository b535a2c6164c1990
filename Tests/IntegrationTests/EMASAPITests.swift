import Foundation
import HTTPDNSTestSupport
import Testing

/// The EMAS HTTPDNS API against the real binary, unbound and dnss on loopback. Signatures are
/// computed by Python's hashlib (`md5(hosts + "-" + secret + "-" + t)`), not by the server's code.
@Suite("EMAS HTTPDNS API")
struct EMASAPITests {
    static let token = "integration-admin-token-1234"
    static let secret = "emas-secret-integration-01"

    /// `hex(md5(text))` by python3's hashlib.
    private func md5(_ text: String) throws -> String { try pythonHexDigest("md5", text) }

    /// `host=...&t=...&s=...` signed with `secret`, `offset` seconds from now.
    private func signed(_ hosts: String, offset: Int = 120, secret: String = Self.secret) throws -> String {
        let t = ClientRequestSigner.expiry(in: offset)
        return "host=\(hosts)&t=\(t)&s=\(try md5("\(hosts)-\(secret)-\(t)"))"
    }

    private func expectEMASError(
        _ response: HTTPClientResponse, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == status, "\(response)", sourceLocation: sourceLocation)
        #expect(response.json["code"]?.string == code, "\(response)", sourceLocation: sourceLocation)
    }

    /// Runs `body` with the default account open and account `12345` requiring EMAS signatures.
    private func withEMASService(_ body: (TestServers, HTTPDNSDProcess) async throws -> Void) async throws {
        try await withSignedAccountService(
            id: "12345", secret: Self.secret, adminToken: Self.token, arguments: ["--advertised-addresses", "127.0.0.1:8080,[::1]:8080"],
            body)
    }

    @Test func singleAndBatchLookupsInBothFamiliesCountAsHits() async throws {
        try await withEMASService { _, service in
            let v4 = try await service.client.get("/default/d?host=\(TestZone.www)")
            #expect(v4.status == 200, "\(v4)")
            #expect(v4.json["host"]?.string == TestZone.www)
            #expect(v4.json["ips"]?.array?.compactMap(\.string).sorted() == TestZone.wwwV4)
            #expect(v4.json["ipsv6"]?.array?.isEmpty == true)
            #expect(v4.json["client_ip"]?.string == "127.0.0.1")
            #expect((v4.json["ttl"]?.int ?? 0) > 0 && v4.json["origin_ttl"]?.int == Int(TestZone.wwwTTL))
            let both = try await service.client.get("/default/d?query=6%2C4&ip=192.0.2.77&unknown=1&host=\(TestZone.www)")
            #expect(both.json["ips"]?.array?.compactMap(\.string).sorted() == TestZone.wwwV4)
            #expect(both.json["ipsv6"]?.array?.compactMap(\.string) == TestZone.wwwV6)
            #expect(both.json["client_ip"]?.string == "192.0.2.77")
            let v6 = try await service.client.get("/default/d?host=\(TestZone.v6Only)&query=6")
            #expect(v6.json["ipsv6"]?.array?.compactMap(\.string) == TestZone.v6OnlyV6)
            // A hit through /d is a hit of the account, as through /v1.
            // The first /d resolved, the second's A came from the cache.
            let stats = try await service.client.get("/v1/default/stats")
            let record = stats.json.array?.first { $0["domain"]?.string == TestZone.www && $0["type"]?.int == 1 }
            #expect(record?["requestPDnsNum"]?.int == 1, "\(stats)")
            #expect(record?["cacheDnsNum"]?.int == 1, "\(stats)")
            for hosts in ["\(TestZone.v4Only),\(TestZone.www)", "\(TestZone.v4Only)%2C\(TestZone.www)"] {
                let batch = try await service.client.get("/default/resolve?host=\(hosts)&query=4,6")
                #expect(batch.status == 200, "\(batch)")
                let dns = batch.json["dns"]?.array ?? []
                #expect(dns.map { $0["host"]?.string } == [TestZone.v4Only, TestZone.www])
                #expect(dns.first?["ips"]?.array?.compactMap(\.string) == TestZone.v4OnlyV4)
                #expect(dns.last?["ipsv6"]?.array?.compactMap(\.string) == TestZone.wwwV6)
            }
        }
    }

    @Test func nxdomainInvalidHostUnknownAccountAndTooManyHosts() async throws {
        try await withEMASService { _, service in
            let missing = try await service.client.get("/default/d?host=nx-\(UInt32.random(in: 0...UInt32.max)).example.test")
            #expect(missing.status == 200, "\(missing)")
            #expect(missing.json["ips"]?.array?.isEmpty == true && missing.json["ipsv6"]?.array?.isEmpty == true)
            expectEMASError(try await service.client.get("/default/d?host=bad_name!"), 400, "InvalidHost")
            expectEMASError(try await service.client.get("/default/d"), 400, "MissingArgument")
            // Account 12345 requires signatures: a missing one is refused as it is (AccountHidingTests).
            expectEMASError(try await service.client.get("/nosuchaccount/d?host=\(TestZone.www)"), 403, "InvalidSignature")
            let six = (1...6).map { "h\($0).example.test" }.joined(separator: ",")
            expectEMASError(try await service.client.get("/default/resolve?host=\(six)"), 400, "TooManyHosts")
            expectEMASError(try await service.client.request("POST", "/default/d?host=\(TestZone.www)"), 405, "MethodNotAllowed")
        }
    }

    /// Upstreams that cannot be reached are the upstreams' failure, not httpdnsd's: `/d` says
    /// `UpstreamFailed` (502), not the server error `InternalError` (500), and a batch leaves the
    /// host out.
    @Test func aHostNoUpstreamCouldResolveIsAnUpstreamFailureNotAServerError() async throws {
        let dead = "doh:http://127.0.0.1:\(deadPort())/dns-query"
        try await withService(upstreams: { _ in [dead] }, localDNSFallback: false) { _, service in
            let single = try await service.client.get("/default/d?host=\(TestZone.www)")
            expectEMASError(single, 502, "UpstreamFailed")
            let batch = try await service.client.get("/default/resolve?host=\(TestZone.www)")
            #expect(batch.status == 200, "\(batch)")
            #expect(batch.json["dns"]?.array?.isEmpty == true, "\(batch)")
        }
    }

    @Test func signedRequestsAreCheckedAndUnsignedOnesRefused() async throws {
        try await withEMASService { _, service in
            let single = try await service.client.get("/12345/sign_d?\(try signed(TestZone.www))")
            #expect(single.status == 200, "\(single)")
            #expect(single.json["ips"]?.array?.compactMap(\.string).sorted() == TestZone.wwwV4)
            let hosts = "\(TestZone.www),\(TestZone.v4Only)"
            let batch = try await service.client.get("/12345/sign_resolve?\(try signed(hosts))&query=4")
            #expect(batch.json["dns"]?.array?.count == 2, "\(batch)")
            expectEMASError(try await service.client.get("/12345/sign_d?\(try signed(TestZone.www, offset: -5))"), 403, "SignatureExpired")
            expectEMASError(
                try await service.client.get("/12345/sign_d?\(try signed(TestZone.www, offset: 3600))"), 403, "InvalidSignature")
            expectEMASError(
                try await service.client.get("/12345/sign_d?\(try signed(TestZone.www, secret: "wrong-secret-0123456789"))"), 403,
                "InvalidSignature")
            let tampered = try signed(hosts).replacingOccurrences(of: TestZone.v4Only, with: TestZone.v6Only)
            expectEMASError(try await service.client.get("/12345/sign_resolve?\(tampered)"), 403, "InvalidSignature")
            expectEMASError(try await service.client.get("/12345/d?host=\(TestZone.www)"), 403, "InvalidSignature")
            expectEMASError(try await service.client.get("/12345/resolve?host=\(TestZone.www)"), 403, "InvalidSignature")
        }
    }

    @Test func serviceAddressesAndLiberalHTTP() async throws {
        try await withEMASService { _, service in
            let ss = try await service.client.get("/default/ss")
            #expect(ss.status == 200, "\(ss)")
            #expect(ss.json["service_ip"]?.array?.compactMap(\.string) == ["127.0.0.1:8080"])
            #expect(ss.json["service_ipv6"]?.array?.compactMap(\.string) == ["[::1]:8080"])
            // HTTP/1.0, and an h2c upgrade offer that is answered over HTTP/1.1 (curl, not our client).
            for flag in ["--http1.0", "--http2"] {
                let text = try CommandRun.run(
                    "/usr/bin/curl", ["-sS", "-i", flag, "http://127.0.0.1:\(service.port)/default/d?host=\(TestZone.www)"],
                    mergingStandardError: false
                ).text
                // libmicrohttpd answers an HTTP/1.0 request with an HTTP/1.1 status line, as RFC 9110 §2.5 allows.
                #expect(text.hasPrefix("HTTP/1.1 200"), "\(flag): \(text)")
                #expect(text.contains(#""host":"\#(TestZone.www)""#), "\(flag): \(text)")
            }
        }
    }

    /// httpdnsd's own EMAS upstream adapter (`httpdns:` upstreams, written against Alibaba's
    /// service before this server side existed) resolves through a second httpdnsd's signed EMAS
    /// API: the client signs `sign_d` with its account's `secretKey`, the server checks it with
    /// the same secret as a client key.
    @Test func httpdnsdsOwnEMASUpstreamResolvesThroughTheSignedAPI() async throws {
        try await withEMASService { servers, service in
            var options = servers.options()
            options.config = [
                "accounts": [
                    "12345": [
                        "upstreams": [.string("httpdns:http://127.0.0.1:\(service.port)")], "secretKey": .string(Self.secret),
                        "localDNSFallback": false, "ipv6Enable": true,
                    ]
                ]
            ]
            try await withHTTPDNSD(options) { relay in
                let answer = try await relay.client.get("/v1/12345/resolve?host=\(TestZone.www)&type=both")
                #expect(answer.status == 200, "\(answer)")
                #expect(answer.json["ips"]?.array?.compactMap(\.string).sorted() == TestZone.wwwV4)
                #expect(answer.json["ipsv6"]?.array?.compactMap(\.string) == TestZone.wwwV6)
                #expect(answer.json["source"]?.string == "upstream")
                #expect(!relay.log().contains(Self.secret))
            }
        }
    }
}
