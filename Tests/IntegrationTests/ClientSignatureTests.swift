import Foundation
import HTTPDNSTestSupport
import Testing

/// Client keys and signature v1 against the real binary. Requests are signed by
/// `ClientRequestSigner` (Python's hmac/hashlib, following docs/security.md), not by the server's
/// code.
@Suite("Client signatures")
struct ClientSignatureTests {
    static let token = "integration-admin-token-1234"
    static let bearer = ["Authorization": "Bearer \(token)"]
    static let resolveSecret = "resolve-secret-integration-01"
    static let manageSecret = "manage-secret-integration-02"
    static let secrets = [resolveSecret, manageSecret]

    /// Runs `body` with account `shop` requiring signatures, with keys `r1` (resolve) and `m1` (manage).
    private func withKeyedService(
        keys: [(String, String, String)] = [("r1", resolveSecret, "resolve"), ("m1", manageSecret, "manage")],
        _ body: (TestServers, HTTPDNSDProcess) async throws -> Void
    ) async throws {
        try await withService(configure: { _, options in options.adminToken = Self.token }) { servers, service in
            let account = loopbackAccount(
                servers,
                [
                    "requireSignedRequests": true,
                    "clientKeys": .array(keys.map { .object(["id": .string($0.0), "secret": .string($0.1), "role": .string($0.2)]) }),
                ])
            try LoopbackGuard.checkAccount(id: "shop", account)
            let put = try await service.client.put("/v1/accounts/shop", json: account, headers: Self.bearer)
            #expect(put.status == 201, "\(put)")
            for (_, secret, _) in keys { #expect(!put.text.contains(secret)) }
            try await body(servers, service)
            for (_, secret, _) in keys { #expect(!service.log().contains(secret), "a client secret reached the log") }
        }
    }

    /// Sends `method path` with `args` and `body`, signed with `kid`/`secret` valid for `offset` seconds.
    private func send(
        _ service: HTTPDNSDProcess, _ method: String, _ path: String, _ args: [(String, String)] = [], body: String? = nil,
        kid: String, secret: String, offset: Int = 120, inHeader: Bool = false, tamper: ((inout String, inout String?) -> Void)? = nil
    ) async throws -> HTTPClientResponse {
        let bytes = body.map { Array($0.utf8) } ?? []
        let signed = try ClientRequestSigner.sign(
            method: method, path: path, args: args, body: bytes, secret: secret, t: ClientRequestSigner.expiry(in: offset))
        var query = inHeader ? signed.query : signed.signedQuery(kid: kid)
        var sentBody = body
        tamper?(&query, &sentBody)
        let headers = inHeader ? ["Authorization": signed.authorization(kid: kid)] : [:]
        let response = try await service.client.request(
            method, query.isEmpty ? path : "\(path)?\(query)",
            headers: headers.merging(sentBody == nil ? [:] : ["Content-Type": "application/json"]) { a, _ in a },
            body: sentBody.map { Array($0.utf8) })
        for secret in Self.secrets { #expect(!response.text.contains(secret), "a secret in a response: \(response)") }
        #expect(!response.text.contains(signed.sign), "the signature echoed: \(response)")
        return response
    }

    private func expectUnauthorized(_ response: HTTPClientResponse, _ says: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectError(response, status: 401, code: "Unauthorized", sourceLocation: sourceLocation)
        #expect(response.header("www-authenticate") == "HTTPDNS-HMAC-SHA256", sourceLocation: sourceLocation)
        #expect(response.json["error"]?["message"]?.string?.hasPrefix(says) == true, "\(response)", sourceLocation: sourceLocation)
    }

    struct Endpoint: Sendable {
        var method: String
        var path: String
        var args: [(String, String)]
        var body: String?
        var role: String
    }

    static let endpoints: [Endpoint] = [
        Endpoint(method: "GET", path: "/v1/shop/resolve", args: [("host", TestZone.www), ("type", "A")], role: "resolve"),
        Endpoint(method: "GET", path: "/v1/shop/cache", args: [("host", TestZone.www)], role: "resolve"),
        Endpoint(method: "GET", path: "/v1/shop/cache", args: [("limit", "10")], role: "manage"),
        Endpoint(method: "POST", path: "/v1/shop/preload", args: [], body: #"{"hosts":["\#(TestZone.v4Only)"]}"#, role: "manage"),
        Endpoint(method: "POST", path: "/v1/shop/cache/refresh", args: [], role: "manage"),
        Endpoint(method: "GET", path: "/v1/shop/stats", args: [], role: "manage"),
        Endpoint(method: "DELETE", path: "/v1/shop/cache", args: [("host", TestZone.v4Only)], role: "manage"),
    ]

    @Test func everyEndpointChecksRoleExpiryKeyAndWhatWasSigned() async throws {
        try await withKeyedService { _, service in
            for endpoint in Self.endpoints {
                let label = "\(endpoint.method) \(endpoint.path)"
                func call(
                    kid: String = "m1", secret: String = Self.manageSecret, offset: Int = 120, inHeader: Bool = false,
                    tamper: ((inout String, inout String?) -> Void)? = nil
                ) async throws -> HTTPClientResponse {
                    try await send(
                        service, endpoint.method, endpoint.path, endpoint.args, body: endpoint.body, kid: kid, secret: secret,
                        offset: offset, inHeader: inHeader, tamper: tamper)
                }
                let manage = try await call()
                #expect((200..<300).contains(manage.status), "\(label) with manage: \(manage)")
                let header = try await call(offset: 121, inHeader: true)
                #expect((200..<300).contains(header.status), "\(label) with the header form: \(header)")
                let resolve = try await call(kid: "r1", secret: Self.resolveSecret)
                if endpoint.role == "resolve" {
                    #expect(resolve.status == 200, "\(label) with resolve: \(resolve)")
                } else {
                    expectError(resolve, status: 403, code: "Forbidden")
                }
                expectUnauthorized(try await call(offset: -5), "signature expired")
                expectUnauthorized(try await call(offset: 700), "signature expiry too far ahead")
                expectUnauthorized(try await call(kid: "nobody"), "bad signature")
                expectUnauthorized(try await call(secret: "not-the-secret-0123456789"), "bad signature")
                expectUnauthorized(try await call(tamper: { query, _ in query = "extra=1&" + query }), "bad signature")
                if endpoint.body != nil {
                    expectUnauthorized(try await call(tamper: { _, body in body = #"{"hosts":["\#(TestZone.www)"]}"# }), "bad signature")
                }
                let unsigned = try await service.client.request(
                    endpoint.method,
                    endpoint.path + (endpoint.args.isEmpty ? "" : "?" + endpoint.args.map { "\($0.0)=\($0.1)" }.joined(separator: "&")),
                    body: endpoint.body.map { Array($0.utf8) })
                expectUnauthorized(unsigned, "missing signature")
            }
        }
    }

    @Test func aReplayedDeleteIsRefusedAndDeletesNothing() async throws {
        try await withKeyedService { _, service in
            let args = [("host", TestZone.www)]
            #expect(try await send(service, "GET", "/v1/shop/resolve", args, kid: "r1", secret: Self.resolveSecret).status == 200)
            let signed = try ClientRequestSigner.sign(
                method: "DELETE", path: "/v1/shop/cache", args: args, secret: Self.manageSecret,
                t: ClientRequestSigner.expiry(in: 300))
            let url = "/v1/shop/cache?" + signed.signedQuery(kid: "m1")
            #expect(try await service.client.delete(url).status == 200)
            #expect(
                try await send(service, "GET", "/v1/shop/resolve", args, kid: "r1", secret: Self.resolveSecret, offset: 121).status == 200)
            expectUnauthorized(try await service.client.delete(url), "replayed signature")
            let lookup = try await send(service, "GET", "/v1/shop/cache", args, kid: "r1", secret: Self.resolveSecret, offset: 122)
            #expect(lookup.status == 200, "the replay deleted the entry: \(lookup)")
        }
    }

    @Test func aRotatedKeyWorksBesideTheOldOneUntilTheAdminRemovesIt() async throws {
        let newSecret = "rotated-secret-integration-03"
        try await withKeyedService(keys: [("old", Self.resolveSecret, "resolve")]) { servers, service in
            let args = [("host", TestZone.www)]
            #expect(try await send(service, "GET", "/v1/shop/resolve", args, kid: "old", secret: Self.resolveSecret).status == 200)
            // Add the new key, sending the old one's secret back as "***", as read from GET.
            let read = try await service.client.get("/v1/accounts/shop", headers: Self.bearer)
            #expect(read.json["config"]?["clientKeys"]?[0]?["secret"]?.string == "***")
            let both = loopbackAccount(
                servers,
                [
                    "requireSignedRequests": true,
                    "clientKeys": [
                        ["id": "old", "secret": "***", "role": "resolve"], ["id": "new", "secret": .string(newSecret), "role": "resolve"],
                    ],
                ])
            #expect(try await service.client.put("/v1/accounts/shop", json: both, headers: Self.bearer).status == 200)
            #expect(
                try await send(service, "GET", "/v1/shop/resolve", args, kid: "old", secret: Self.resolveSecret, offset: 121).status == 200)
            #expect(try await send(service, "GET", "/v1/shop/resolve", args, kid: "new", secret: newSecret, offset: 122).status == 200)
            let newOnly = loopbackAccount(
                servers,
                [
                    "requireSignedRequests": true, "clientKeys": [["id": "new", "secret": "***", "role": "resolve"]],
                ])
            let put = try await service.client.put("/v1/accounts/shop", json: newOnly, headers: Self.bearer)
            #expect(put.status == 200, "\(put)")
            #expect(!put.text.contains(newSecret))
            expectUnauthorized(
                try await send(service, "GET", "/v1/shop/resolve", args, kid: "old", secret: Self.resolveSecret, offset: 123),
                "bad signature")
            #expect(try await send(service, "GET", "/v1/shop/resolve", args, kid: "new", secret: newSecret, offset: 124).status == 200)
            #expect(!service.log().contains(newSecret))
        }
    }

    /// The worked example of docs/security.md (key `app1`, two hosts joined by a comma, `type=A`),
    /// with this test zone's names and a fresh expiry: the same canonical form serves a real request.
    @Test func theDocumentedExampleFormSignsARealRequest() async throws {
        let secret = "example-secret-0123456789"
        try await withKeyedService(keys: [("app1", secret, "resolve")]) { _, service in
            let hosts = "\(TestZone.www),\(TestZone.v4Only)"
            let t = ClientRequestSigner.expiry(in: 120)
            let signed = try ClientRequestSigner.sign(
                method: "GET", path: "/v1/shop/resolve", args: [("host", hosts), ("type", "A")], secret: secret, t: t)
            #expect(
                signed.canonical
                    == [
                        "HTTPDNS-HMAC-SHA256", "GET", "/v1/shop/resolve", "host=\(TestZone.www)%2C\(TestZone.v4Only)&type=A", String(t),
                        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                    ].joined(separator: "\n"))
            let response = try await service.client.get("/v1/shop/resolve?" + signed.signedQuery(kid: "app1"))
            #expect(response.status == 200, "\(response)")
            #expect(response.json["results"]?.array?.count == 2, "\(response)")
            // The header form of the same request.
            let header = try await service.client.get(
                "/v1/shop/resolve?" + signed.query, headers: ["Authorization": signed.authorization(kid: "app1")])
            #expect(header.status == 200, "\(header)")
        }
    }

    /// Signed hits of a cached name are answered on the fast path (`httpdns_http_fast_path_total`
    /// counts them), in the query and the header form; every refused signature for the same
    /// cached name is left to the general path, which answers its usual 401.
    @Test func signedHitsOfACachedNameTakeTheFastPathAndRefusalsDoNot() async throws {
        try await withKeyedService { _, service in
            let path = "/v1/shop/resolve"
            let args = [("host", TestZone.www), ("type", "A")]
            // The first request misses (general path): the name is cached from then on.
            #expect(try await send(service, "GET", path, args, kid: "r1", secret: Self.resolveSecret).status == 200)
            func fastAnswers() async throws -> Double {
                try await service.metrics().sum("httpdns_http_fast_path_total", ["listener": "main"])
            }
            let before = try await fastAnswers()
            let signers = [
                ("r1", Self.resolveSecret, false), ("r1", Self.resolveSecret, true), ("m1", Self.manageSecret, false),
                ("m1", Self.manageSecret, true),
            ]
            for (index, (kid, secret, inHeader)) in signers.enumerated() {
                let hit = try await send(service, "GET", path, args, kid: kid, secret: secret, offset: 121 + index, inHeader: inHeader)
                #expect(hit.status == 200, "\(kid) header \(inHeader): \(hit)")
                #expect(hit.text.contains(#""source":"cache""#), "\(hit)")
            }
            #expect(try await fastAnswers() == before + Double(signers.count), "signed hits were not answered on the fast path")

            func call(
                kid: String = "r1", secret: String = Self.resolveSecret, offset: Int = 130, inHeader: Bool = false,
                tamper: ((inout String, inout String?) -> Void)? = nil
            ) async throws -> HTTPClientResponse {
                try await send(service, "GET", path, args, kid: kid, secret: secret, offset: offset, inHeader: inHeader, tamper: tamper)
            }
            for inHeader in [false, true] {
                expectUnauthorized(try await call(offset: -5, inHeader: inHeader), "signature expired")
                expectUnauthorized(try await call(offset: 700, inHeader: inHeader), "signature expiry too far ahead")
                expectUnauthorized(try await call(kid: "nobody", inHeader: inHeader), "bad signature")
                expectUnauthorized(try await call(secret: "not-the-secret-0123456789", inHeader: inHeader), "bad signature")
                expectUnauthorized(try await call(inHeader: inHeader, tamper: { query, _ in query += "&short=1" }), "bad signature")
            }
            expectUnauthorized(try await service.client.get("\(path)?host=\(TestZone.www)&type=A"), "missing signature")
            expectUnauthorized(
                try await service.client.get(
                    "\(path)?host=\(TestZone.www)&type=A", headers: ["Authorization": "HTTPDNS-HMAC-SHA256 kid=r1"]),
                "malformed signature")
            #expect(try await fastAnswers() == before + Double(signers.count), "a refused request was answered on the fast path")
        }
    }

    @Test func anOpenAccountBesideIsServedWithoutSignatures() async throws {
        try await withKeyedService { _, service in
            #expect(try await service.client.get("/v1/default/resolve?host=\(TestZone.www)").status == 200)
            expectUnauthorized(try await service.client.get("/v1/shop/resolve?host=\(TestZone.www)"), "missing signature")
        }
    }
}
