import Foundation
import HTTPDNSTestSupport
import Testing

/// The DoH JSON API against the real binary and unbound on loopback. Signatures are computed
/// by Python's hashlib (`sha256(uid + secret + ts + name + ak)`), not by the server's code.
@Suite("DoH JSON API")
struct DoHJSONAPITests {
    static let token = "integration-admin-token-1234"
    static let secret = "dohjson-secret-integration-01"

    /// `hex(sha256(text))` by python3's hashlib.
    private func sha256(_ text: String) throws -> String { try pythonHexDigest("sha256", text) }

    /// `name=..&uid=..&ak=..&ts=..&key=..` signed with `secret`, `ts` `offset` seconds from now.
    private func signed(_ name: String, uid: String = "12345", ak: String = "k1", offset: Int = 0, secret: String = Self.secret) throws
        -> String
    {
        let ts = ClientRequestSigner.expiry(in: offset)
        return "name=\(name)&uid=\(uid)&ak=\(ak)&ts=\(ts)&key=\(try sha256("\(uid)\(secret)\(ts)\(name)\(ak)"))"
    }

    private func expectError(
        _ response: HTTPClientResponse, _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == status, "\(response)", sourceLocation: sourceLocation)
        #expect(response.json["Code"]?.string == code, "\(response)", sourceLocation: sourceLocation)
        #expect(response.json["Comment"]?.string != nil, "\(response)", sourceLocation: sourceLocation)
    }

    /// Runs `body` with the default account open and account `12345` requiring signatures.
    private func withDoHJSONService(_ body: (TestServers, HTTPDNSDProcess) async throws -> Void) async throws {
        try await withSignedAccountService(id: "12345", secret: Self.secret, adminToken: Self.token, body)
    }

    @Test func aAndAAAANXDOMAINAndShortAnswersCountAsHits() async throws {
        try await withDoHJSONService { _, service in
            let v4 = try await service.client.get("/resolve?name=\(TestZone.www)&type=A")
            #expect(v4.status == 200, "\(v4)")
            #expect(v4.json["Status"]?.int == 0)
            #expect(v4.json["Question"]?.array?.first?["name"]?.string == "\(TestZone.www).")
            let records = v4.json["Answer"]?.array ?? []
            #expect(records.compactMap { $0["data"]?.string }.sorted() == TestZone.wwwV4)
            #expect(records.allSatisfy { $0["type"]?.int == 1 && $0["name"]?.string == "\(TestZone.www)." && ($0["TTL"]?.int ?? 0) > 0 })
            let v6 = try await service.client.get("/resolve?name=\(TestZone.www)&type=28")
            #expect(v6.json["Answer"]?.array?.compactMap { $0["data"]?.string } == TestZone.wwwV6, "\(v6)")
            #expect(v6.json["Answer"]?.array?.first?["type"]?.int == 28)
            let short = try await service.client.get("/resolve?name=\(TestZone.www)&short=1")
            #expect(short.json.array?.compactMap(\.string).sorted() == TestZone.wwwV4, "\(short)")
            let missing = try await service.client.get("/resolve?name=nx-\(UInt32.random(in: 0...UInt32.max)).example.test")
            #expect(missing.status == 200, "\(missing)")
            #expect(missing.json["Status"]?.int == 3)
            #expect(missing.json["Answer"] == nil)
            // The first A resolved, the short one came from the cache: a hit, as through /v1.
            let stats = try await service.client.get("/v1/default/stats")
            let record = stats.json.array?.first { $0["domain"]?.string == TestZone.www && $0["type"]?.int == 1 }
            #expect(record?["requestPDnsNum"]?.int == 1, "\(stats)")
            #expect(record?["cacheDnsNum"]?.int == 1, "\(stats)")
            let metrics = try await service.client.get("/metrics")
            let text = PrometheusText(String(decoding: metrics.body, as: UTF8.self))
            #expect(text.sum("httpdns_request_duration_seconds_count", ["protocol": "json"]) == 4, "\(metrics)")
        }
    }

    @Test func badRequestsUnknownUidAndDNSQuery() async throws {
        try await withDoHJSONService { _, service in
            expectError(try await service.client.get("/resolve?name=bad_name!"), 400, "InvalidHost")
            expectError(try await service.client.get("/resolve?name=\(TestZone.www)&type=MX"), 400, "UnsupportedType")
            // Account 12345 requires signatures: a missing one is refused as it is (AccountHidingTests).
            expectError(try await service.client.get("/resolve?name=\(TestZone.www)&uid=nosuchaccount"), 403, "InvalidSignature")
            let json = try await service.client.get(
                "/dns-query?name=\(TestZone.www)&type=AAAA", headers: ["Accept": "application/dns-json"])
            #expect(json.status == 200, "\(json)")
            #expect(json.json["Answer"]?.array?.compactMap { $0["data"]?.string } == TestZone.wwwV6)
            // Without the JSON Accept header, /dns-query is RFC 8484 (RFC8484Tests).
            let message = try await service.client.get("/dns-query?dns=AAABAAABAAAAAAAAA3d3dwdleGFtcGxlBHRlc3QAAAEAAQ")
            #expect(message.status == 200, "\(message)")
            #expect(message.header("content-type") == "application/dns-message")
        }
    }

    @Test func signedRequestsAreCheckedAndUnsignedOnesRefused() async throws {
        try await withDoHJSONService { _, service in
            let valid = try await service.client.get("/resolve?\(try signed(TestZone.www))")
            #expect(valid.status == 200, "\(valid)")
            #expect(valid.json["Answer"]?.array?.compactMap { $0["data"]?.string }.sorted() == TestZone.wwwV4)
            expectError(try await service.client.get("/resolve?\(try signed(TestZone.www, offset: -3600))"), 403, "SignatureExpired")
            expectError(
                try await service.client.get("/resolve?\(try signed(TestZone.www, secret: "wrong-secret-0123456789"))"), 403,
                "InvalidSignature")
            expectError(try await service.client.get("/resolve?\(try signed(TestZone.www, ak: "k9"))"), 403, "InvalidSignature")
            expectError(try await service.client.get("/resolve?name=\(TestZone.www)&uid=12345"), 403, "InvalidSignature")
        }
    }

    /// httpdnsd's own DoH JSON upstream client (`json:` upstreams, written against Alibaba's and
    /// Google's services before this server side existed) resolves through a second httpdnsd's
    /// `/resolve`: unsigned for an open account, and signed with the account's
    /// `accessKeyId`/`accessKeySecret`, which the server checks as a client key.
    @Test func httpdnsdsOwnDoHJSONUpstreamResolvesThroughTheAPI() async throws {
        try await withDoHJSONService { servers, service in
            var options = servers.options()
            options.config = [
                "accounts": [
                    "12345": [
                        "upstreams": [.string("json:http://127.0.0.1:\(service.port)/resolve")],
                        "accessKeyId": "k1", "accessKeySecret": .string(Self.secret),
                        "localDNSFallback": false, "ipv6Enable": true,
                    ],
                    "default": [
                        "upstreams": [.string("json:http://127.0.0.1:\(service.port)/resolve")],
                        "localDNSFallback": false,
                    ],
                ]
            ]
            try await withHTTPDNSD(options) { relay in
                let signed = try await relay.client.get("/v1/12345/resolve?host=\(TestZone.www)&type=both")
                #expect(signed.status == 200, "\(signed)")
                #expect(signed.json["ips"]?.array?.compactMap(\.string).sorted() == TestZone.wwwV4)
                #expect(signed.json["ipsv6"]?.array?.compactMap(\.string) == TestZone.wwwV6)
                #expect(signed.json["source"]?.string == "upstream")
                let open = try await relay.client.get("/v1/default/resolve?host=\(TestZone.v4Only)")
                #expect(open.json["ips"]?.array?.compactMap(\.string) == TestZone.v4OnlyV4, "\(open)")
                let missing = try await relay.client.get("/v1/default/resolve?host=nx-\(UInt32.random(in: 0...UInt32.max)).example.test")
                #expect(missing.json["nxdomain"]?.bool == true, "\(missing)")
                #expect(!relay.log().contains(Self.secret))
            }
        }
    }
}
