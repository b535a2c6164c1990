import Foundation
import HTTPDNSCore
import HTTPDNSWire
import Testing

@testable import HTTPDNSServer

/// Client keys in front of the tenant API: who may call what, and every reason a signature is
/// refused. Time is the fixture's manual clock.
@Suite struct ClientAuthenticationTests {
    static let resolveSecret = "resolve-secret-0123456789"
    static let manageSecret = "manage-secret-0123456789"

    private func fixture(requireSigned: Bool = true, maxAge: Double = 600) -> ServiceFixture {
        let fixture = ServiceFixture(
            config: .test {
                $0.clientKeys = [
                    ClientKey(id: "r1", secret: Self.resolveSecret, role: .resolve),
                    ClientKey(id: "m1", secret: Self.manageSecret, role: .manage),
                ]
                $0.requireSignedRequests = requireSigned
                $0.maxSignatureAge = maxAge
            })
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.1"]))])
        return fixture
    }

    /// A request signed with `secret` (the server's canonicaliser: these are unit tests of the
    /// checks; the integration tests sign independently).
    private func signed(
        _ method: String, _ path: String, _ query: [String: String] = [:], body: [UInt8] = [], kid: String, secret: String,
        expiry: Double, inHeader: Bool = false
    ) throws -> HTTPRequest {
        let t = String(Int(expiry))
        let canonical = try SignatureV1.canonicalString(
            method: method, path: path, arguments: query.map { ($0.key, $0.value) }, expiry: t, body: body)
        let sign = try SignatureV1.signature(secret: secret, canonical: canonical)
        if inHeader {
            return HTTPRequest(
                method: method, path: path, query: query, authorization: "HTTPDNS-HMAC-SHA256 kid=\(kid),t=\(t),sign=\(sign)", body: body)
        }
        return HTTPRequest(method: method, path: path, query: query.merging(["kid": kid, "t": t, "sign": sign]) { a, _ in a }, body: body)
    }

    private func send(_ fixture: ServiceFixture, _ request: HTTPRequest) -> Exchange {
        Exchange(fixture.handle(request), releasing: fixture.upstreams + [fixture.fallback])
    }

    struct Endpoint: Sendable, CustomStringConvertible {
        var method: String
        var path: String
        var query: [String: String] = [:]
        var body: String = ""
        var role: ClientKey.Role
        var description: String { "\(method) \(path) \(query)" }
    }

    static let endpoints: [Endpoint] = [
        Endpoint(method: "GET", path: "/v1/default/resolve", query: ["host": "www.example.test"], role: .resolve),
        Endpoint(method: "GET", path: "/v1/default/cache", query: ["host": "www.example.test"], role: .resolve),
        Endpoint(method: "GET", path: "/v1/default/cache", role: .manage),
        Endpoint(method: "DELETE", path: "/v1/default/cache", query: ["host": "www.example.test"], role: .manage),
        Endpoint(method: "POST", path: "/v1/default/preload", body: #"{"hosts":["www.example.test"]}"#, role: .manage),
        Endpoint(method: "POST", path: "/v1/default/cache/refresh", role: .manage),
        Endpoint(method: "GET", path: "/v1/default/stats", role: .manage),
    ]

    @Test(arguments: endpoints)
    func eachEndpointNeedsItsRole(endpoint: Endpoint) throws {
        let fixture = fixture()
        let now = fixture.clock.now()
        let manage = send(
            fixture,
            try signed(
                endpoint.method, endpoint.path, endpoint.query, body: Array(endpoint.body.utf8), kid: "m1", secret: Self.manageSecret,
                expiry: now + 60))
        #expect(manage.status < 300, "manage key on \(endpoint): \(manage.text)")
        let resolve = send(
            fixture,
            try signed(
                endpoint.method, endpoint.path, endpoint.query, body: Array(endpoint.body.utf8), kid: "r1", secret: Self.resolveSecret,
                expiry: now + 61))
        if endpoint.role == .resolve {
            #expect(resolve.status < 300, "resolve key on \(endpoint): \(resolve.text)")
        } else {
            #expect(resolve.status == 403)
            #expect(resolve.errorCode == "Forbidden")
            #expect(resolve.errorMessage == "key 'r1' has role resolve; this endpoint needs manage")
        }
        let unsigned = send(
            fixture, HTTPRequest(method: endpoint.method, path: endpoint.path, query: endpoint.query, body: Array(endpoint.body.utf8)))
        #expect(unsigned.status == 401)
        #expect(unsigned.header("WWW-Authenticate") == "HTTPDNS-HMAC-SHA256")
    }

    @Test func theHeaderFormIsAcceptedLikeTheQueryForm() throws {
        let fixture = fixture()
        let request = try signed(
            "GET", "/v1/default/resolve", ["host": "www.example.test"], kid: "r1", secret: Self.resolveSecret,
            expiry: fixture.clock.now() + 10, inHeader: true)
        #expect(send(fixture, request).status == 200)
    }

    private func expectRefused(_ exchange: Exchange, _ says: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(exchange.status == 401, sourceLocation: sourceLocation)
        #expect(exchange.errorCode == "Unauthorized", sourceLocation: sourceLocation)
        #expect(exchange.header("WWW-Authenticate") == "HTTPDNS-HMAC-SHA256", sourceLocation: sourceLocation)
        #expect(exchange.errorMessage?.hasPrefix(says) == true, "\(exchange.errorMessage ?? exchange.text)", sourceLocation: sourceLocation)
        for secret in [Self.resolveSecret, Self.manageSecret] {
            #expect(!exchange.text.contains(secret), sourceLocation: sourceLocation)
        }
    }

    @Test func anUnknownKeyIDAndAWrongSignatureAreRefusedAlike() throws {
        let fixture = fixture(maxAge: 300)
        let now = fixture.clock.now()
        let host = ["host": "www.example.test"]
        let unknown = send(
            fixture, try signed("GET", "/v1/default/resolve", host, kid: "nobody", secret: Self.resolveSecret, expiry: now + 10))
        let wrong = send(fixture, try signed("GET", "/v1/default/resolve", host, kid: "r1", secret: Self.manageSecret, expiry: now + 10))
        #expect(unknown.status == 401 && unknown.text == wrong.text, "\(unknown.text) beside \(wrong.text)")
        // The account's maxSignatureAge is told only to a caller whose signature is right.
        let ahead = send(
            fixture, try signed("GET", "/v1/default/resolve", host, kid: "nobody", secret: Self.resolveSecret, expiry: now + 301))
        #expect(ahead.text == wrong.text, "\(ahead.text)")
    }

    @Test func everyRefusalSaysWhichCheckFailed() throws {
        let fixture = fixture(maxAge: 300)
        let now = fixture.clock.now()
        let host = ["host": "www.example.test"]
        expectRefused(send(fixture, HTTPRequest(method: "GET", path: "/v1/default/resolve", query: host)), "missing signature")
        expectRefused(
            send(fixture, HTTPRequest(method: "GET", path: "/v1/default/resolve", query: ["host": "www.example.test", "kid": "r1"])),
            "malformed signature")
        expectRefused(
            send(fixture, try signed("GET", "/v1/default/resolve", host, kid: "nobody", secret: Self.resolveSecret, expiry: now + 10)),
            "bad signature")
        expectRefused(
            send(fixture, try signed("GET", "/v1/default/resolve", host, kid: "r1", secret: Self.resolveSecret, expiry: now - 1)),
            "signature expired")
        expectRefused(
            send(fixture, try signed("GET", "/v1/default/resolve", host, kid: "r1", secret: Self.resolveSecret, expiry: now + 301)),
            "signature expiry too far ahead")
        // Signed with the other key's secret, a tampered query, a tampered body, another path.
        expectRefused(
            send(fixture, try signed("GET", "/v1/default/resolve", host, kid: "r1", secret: Self.manageSecret, expiry: now + 10)),
            "bad signature")
        var tampered = try signed("GET", "/v1/default/resolve", host, kid: "r1", secret: Self.resolveSecret, expiry: now + 10)
        tampered.query = QueryArguments([
            "host": "other.example.test", "kid": "r1", "t": tampered.query["t"]!, "sign": tampered.query["sign"]!,
        ])
        expectRefused(send(fixture, tampered), "bad signature")
        var body = try signed(
            "POST", "/v1/default/preload", body: Array(#"{"hosts":["a.test"]}"#.utf8), kid: "m1", secret: Self.manageSecret,
            expiry: now + 10)
        body.body = Array(#"{"hosts":["b.test"]}"#.utf8)
        expectRefused(send(fixture, body), "bad signature")
        var moved = try signed("GET", "/v1/default/stats", kid: "m1", secret: Self.manageSecret, expiry: now + 10)
        moved.path = "/v1/default/cache"
        expectRefused(send(fixture, moved), "bad signature")
        #expect(fixture.upstream.totalCalls == 0)
    }

    @Test func aSignatureIsValidUntilItsExpiryOnTheInjectedClock() throws {
        let fixture = fixture()
        let request = try signed(
            "GET", "/v1/default/resolve", ["host": "www.example.test"], kid: "r1", secret: Self.resolveSecret,
            expiry: fixture.clock.now() + 30)
        #expect(send(fixture, request).status == 200)
        fixture.clock.advance(by: 30)
        #expect(send(fixture, request).status == 200)
        fixture.clock.advance(by: 1)
        expectRefused(send(fixture, request), "signature expired")
    }

    @Test func aReplayedDeleteIsRefusedAndChangesNothing() throws {
        let fixture = fixture()
        let delete = try signed(
            "DELETE", "/v1/default/cache", ["host": "www.example.test"], kid: "m1", secret: Self.manageSecret,
            expiry: fixture.clock.now() + 60)
        #expect(send(fixture, delete).status == 200)
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.2"]))])
        expectRefused(send(fixture, delete), "replayed signature")
        #expect(fixture.engine.cachedResolution(host: HostName("www.example.test")!, family: .a) != nil)
    }

    @Test func aRepeatedGetIsNotAReplay() throws {
        let fixture = fixture()
        let get = try signed("GET", "/v1/default/stats", kid: "m1", secret: Self.manageSecret, expiry: fixture.clock.now() + 60)
        #expect(send(fixture, get).status == 200)
        #expect(send(fixture, get).status == 200)
    }

    /// An RFC 8484 POST is a query (its signature covers the DNS message): sent again, it is
    /// answered again, and it takes no room in the replay memory of signed changes.
    @Test func aSignedDNSMessagePostIsAQueryNotAChange() throws {
        let fixture = fixture()
        let body = try DNSQueryWriter.query(name: "www.example.test", type: 1, id: 7)
        let expiry = fixture.clock.now() + 60
        var post = try signed("POST", "/v1/default/dns-query", body: body, kid: "r1", secret: Self.resolveSecret, expiry: expiry)
        post.contentType = "application/dns-message"
        #expect(send(fixture, post).status == 200)
        #expect(send(fixture, post).status == 200, "a repeated query is not a replayed change")
        #expect(fixture.service.authenticator.replays.count(account: "default") == 0)
    }

    @Test func aForbiddenChangeIsNotRemembered() throws {
        // The resolve key's DELETE is refused by role; it must not use up the replay memory.
        let fixture = fixture()
        let delete = try signed("DELETE", "/v1/default/cache", kid: "r1", secret: Self.resolveSecret, expiry: fixture.clock.now() + 60)
        #expect(send(fixture, delete).status == 403)
        #expect(send(fixture, delete).status == 403)
    }

    @Test func withoutRequireSignedUnsignedRequestsAreServedAndSignedOnesChecked() throws {
        let fixture = fixture(requireSigned: false)
        #expect(fixture.get("/v1/default/resolve", ["host": "www.example.test"]).status == 200)
        #expect(fixture.get("/v1/default/stats").status == 200)
        expectRefused(
            send(
                fixture,
                try signed(
                    "GET", "/v1/default/resolve", ["host": "www.example.test"], kid: "r1", secret: Self.manageSecret,
                    expiry: fixture.clock.now() + 10)), "bad signature")
        #expect(
            send(fixture, try signed("GET", "/v1/default/stats", kid: "r1", secret: Self.resolveSecret, expiry: fixture.clock.now() + 10))
                .status == 403)
    }

    @Test func anAccountWithoutKeysStaysOpen() {
        let fixture = ServiceFixture()
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.1"]))])
        #expect(fixture.get("/v1/default/resolve", ["host": "www.example.test"]).status == 200)
        #expect(fixture.send("DELETE", "/v1/default/cache").status == 200)
    }

    @Test func probesMetricsAndTheAdminAPINeedNoClientKey() {
        let fixture = ServiceFixture(
            config: .test {
                $0.clientKeys = [ClientKey(id: "r1", secret: Self.resolveSecret, role: .resolve)]
                $0.requireSignedRequests = true
            }, adminToken: "admin-token")
        fixture.service.isReady = true
        #expect(fixture.get("/healthz").status == 200)
        #expect(fixture.get("/readyz").status == 200)
        #expect(fixture.get("/metrics").status == 200)
        let account = fixture.get("/v1/accounts/default", authorization: "Bearer admin-token")
        #expect(account.status == 200)
        #expect(!account.text.contains(Self.resolveSecret))
        #expect(account.text.contains(#""secret":"***""#))
    }

    @Test func anAdminPutWithRedactedSecretsKeepsTheKeys() throws {
        let fixture = fixture()
        let body =
            #"{"upstreams":["doh:http://127.0.0.1:9/dns-query"],"localDNSFallback":false,"requireSignedRequests":true,"#
            + #""clientKeys":[{"id":"r1","secret":"***","role":"resolve"},{"id":"n1","secret":"new-secret-0123456789","role":"manage"}]}"#
        let service = HTTPDNSService(registry: fixture.registry, accountStore: nil, adminToken: "t", clock: fixture.clock)
        let put = Exchange(
            service.handle(HTTPRequest(method: "PUT", path: "/v1/accounts/default", authorization: "Bearer t", body: Array(body.utf8))))
        #expect(put.status == 200, "\(put.text)")
        #expect(!put.text.contains("new-secret-0123456789"))
        let keys = fixture.engine.config.clientKeys
        #expect(
            keys == [
                ClientKey(id: "r1", secret: Self.resolveSecret, role: .resolve),
                ClientKey(id: "n1", secret: "new-secret-0123456789", role: .manage),
            ])
        let unknown = #"{"clientKeys":[{"id":"zz","secret":"***","role":"resolve"}]}"#
        let refused = Exchange(
            service.handle(HTTPRequest(method: "PUT", path: "/v1/accounts/default", authorization: "Bearer t", body: Array(unknown.utf8))))
        #expect(refused.status == 400)
        #expect(refused.errorMessage?.contains("clientKeys[0].secret") == true)
        #expect(fixture.engine.config.clientKeys == keys)
    }
}

/// The fast path answers a signed hit of an account with client keys through the general
/// pipeline's own checks (`HTTPDNSService.admit`), and leaves every request they refuse to
/// `handle`, which answers it; an open account's hits stay on it.
@Suite(.serialized) struct FastPathAuthenticationTests {
    private func keyedFixture(requireSigned: Bool = true) -> ServiceFixture {
        let fixture = ServiceFixture(
            config: .test {
                $0.clientKeys = [
                    ClientKey(id: "r1", secret: ClientAuthenticationTests.resolveSecret, role: .resolve),
                    ClientKey(id: "m1", secret: ClientAuthenticationTests.manageSecret, role: .manage),
                ]
                $0.requireSignedRequests = requireSigned
            })
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.1"]))])
        return fixture
    }

    /// `GET /v1/default/resolve?host=...` signed with `secret` at expiry `t`, in the query or the header.
    private func signedHead(
        _ fixture: ServiceFixture, host: String = "www.example.test", kid: String = "r1",
        secret: String = ClientAuthenticationTests.resolveSecret, offset: Double = 60, inHeader: Bool = false,
        extra: [(String, String?)] = []
    ) throws -> MemoryHead {
        let t = String(Int(fixture.clock.now() + offset))
        let canonical = try SignatureV1.canonicalString(
            method: "GET", path: "/v1/default/resolve", arguments: [("host", host)], expiry: t, body: [])
        let sign = try SignatureV1.signature(secret: secret, canonical: canonical)
        if inHeader {
            return MemoryHead(
                "GET", "/v1/default/resolve", [("host", host)] + extra,
                authorization: "HTTPDNS-HMAC-SHA256 kid=\(kid),t=\(t),sign=\(sign)")
        }
        return MemoryHead("GET", "/v1/default/resolve", [("host", host), ("kid", kid), ("t", t), ("sign", sign)] + extra)
    }

    /// The fast path's body for `head`, and what `handle` answers for the same request.
    private func bothPaths(_ fixture: ServiceFixture, _ head: MemoryHead) -> (fast: [UInt8]?, general: Exchange) {
        let fast = fixture.service.fastResponse(head)?.body
        return (fast, Exchange(fixture.handle(head.request()), releasing: fixture.upstreams + [fixture.fallback]))
    }

    @Test(arguments: [false, true]) func aSignedHitIsAnsweredFastWithTheGeneralPathsBody(inHeader: Bool) throws {
        let fixture = keyedFixture()
        for (kid, secret) in [("r1", ClientAuthenticationTests.resolveSecret), ("m1", ClientAuthenticationTests.manageSecret)] {
            let (fast, general) = bothPaths(fixture, try signedHead(fixture, kid: kid, secret: secret, inHeader: inHeader))
            let body = try #require(fast, "a signed hit (\(kid)) was left to the general path")
            #expect(general.status == 200)
            #expect(body == general.response?.body)
        }
    }

    @Test func everyRefusedSignatureIsLeftToTheGeneralPathWhichAnswersIt() throws {
        let fixture = keyedFixture()
        let refused: [(String, MemoryHead, Int, String)] = [
            ("unsigned", MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test")]), 401, "missing signature"),
            ("expired", try signedHead(fixture, offset: -5), 401, "signature expired"),
            ("too far ahead", try signedHead(fixture, offset: 700), 401, "signature expiry too far ahead"),
            ("unknown key", try signedHead(fixture, kid: "nobody"), 401, "bad signature"),
            ("wrong secret", try signedHead(fixture, secret: "not-the-secret-0123456789"), 401, "bad signature"),
            ("tampered", try signedHead(fixture, extra: [("type", "A")]), 401, "bad signature"),
            ("repeated argument", try signedHead(fixture, extra: [("host", "x.test")]), 401, "malformed signature"),
            (
                "malformed header",
                MemoryHead(
                    "GET", "/v1/default/resolve", [("host", "www.example.test")],
                    authorization: "HTTPDNS-HMAC-SHA256 kid=r1"), 401, "malformed signature"
            ),
            ("control character", try signedHead(fixture, extra: [("x", "a\u{01}")]), 400, ""),
        ]
        for (label, head, status, message) in refused {
            let hits = fixture.engine.metrics.cacheHits.value
            let fast = fixture.service.fastResponse(head)?.body
            // Nothing refused is counted as a hit.
            #expect(fixture.engine.metrics.cacheHits.value == hits, "\(label): counted as a hit")
            let general = Exchange(fixture.handle(head.request()), releasing: fixture.upstreams + [fixture.fallback])
            #expect(fast == nil, "\(label): answered on the fast path")
            #expect(general.status == status, "\(label): \(general.text)")
            #expect(general.errorMessage?.hasPrefix(message) == true, "\(label): \(general.text)")
        }
    }

    @Test func anUnsignedHitOfAnAccountThatDoesNotRequireSignaturesIsAnsweredFast() throws {
        let fixture = keyedFixture(requireSigned: false)
        #expect(fixture.service.fastResponse(MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test")]))?.body != nil)
        // A bad signature is still refused when the account does not require one.
        let (fast, general) = bothPaths(fixture, try signedHead(fixture, secret: "not-the-secret-0123456789"))
        #expect(fast == nil)
        #expect(general.status == 401)
    }

    @Test func anOpenAccountsHitIsAnsweredFast() {
        let open = ServiceFixture()
        open.seed([("www.example.test", .a, open.entry(["127.0.0.1"]))])
        #expect(open.service.fastResponse(MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test")]))?.body != nil)
    }

    @Test func aSignedOnlyAccountsCachedHostIsRefusedWithoutASignatureOverASocket() throws {
        let fixture = keyedFixture()
        let server = HTTPServer(
            options: HTTPServerOptions(host: "127.0.0.1", port: 0, threads: 2),
            fastHandler: fixture.service.fastPath, handler: fixture.service.handle)
        let port = try server.start()
        defer { server.stop(grace: 0) }
        let connection = try RawHTTPConnection(port: port)
        let refused = try connection.request("GET", "/v1/default/resolve?host=www.example.test")
        #expect(refused.status == 401)
        #expect(refused.header("WWW-Authenticate") == "HTTPDNS-HMAC-SHA256")
        #expect(!refused.text.contains("127.0.0.1"))

        let t = String(Int(fixture.clock.now()) + 60)
        let canonical = try SignatureV1.canonicalString(
            method: "GET", path: "/v1/default/resolve", arguments: [("host", "www.example.test")], expiry: t, body: [])
        let sign = try SignatureV1.signature(secret: ClientAuthenticationTests.resolveSecret, canonical: canonical)
        let signed = try connection.request("GET", "/v1/default/resolve?host=www.example.test&kid=r1&t=\(t)&sign=\(sign)")
        #expect(signed.status == 200)
        #expect(signed.text.contains("127.0.0.1"))
        let header = try connection.request(
            "GET", "/v1/default/resolve?host=www.example.test",
            headers: [("Authorization", "HTTPDNS-HMAC-SHA256 kid=r1,t=\(t),sign=\(sign)")])
        #expect(header.status == 200)
        // A repeated argument in a signed request is refused, not silently read as its first value.
        let repeated = try connection.request("GET", "/v1/default/resolve?host=www.example.test&kid=r1&t=\(t)&sign=\(sign)&host=x.test")
        #expect(repeated.status == 401)
        #expect(repeated.text.contains("more than once"))
    }

    /// Clients correct their clock from `Date` (RFC 9110 IMF-fixdate): every response has one,
    /// fast path or not, within a few seconds of the real time.
    @Test func everyResponseCarriesAnAccurateDateHeader() throws {
        let fixture = ServiceFixture()
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.1"]))])
        let server = HTTPServer(
            options: HTTPServerOptions(host: "127.0.0.1", port: 0, threads: 2),
            fastHandler: fixture.service.fastPath, handler: fixture.service.handle)
        let port = try server.start()
        defer { server.stop(grace: 0) }
        let connection = try RawHTTPConnection(port: port)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        for path in ["/v1/default/resolve?host=www.example.test", "/v1/default/stats", "/nothing", "/healthz"] {
            let before = Date().timeIntervalSince1970.rounded(.down)
            let response = try connection.request("GET", path)
            let after = Date().timeIntervalSince1970.rounded(.up)
            #expect(response.headerCount("Date") == 1, "\(path)")
            let date = try #require(
                response.header("Date").flatMap { formatter.date(from: $0) }, "\(path): \(response.header("Date") ?? "none")")
            #expect(date.timeIntervalSince1970 >= before - 1 && date.timeIntervalSince1970 <= after + 1, "\(path)")
        }
    }
}
