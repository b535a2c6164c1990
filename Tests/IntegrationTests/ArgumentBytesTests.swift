import Foundation
import HTTPDNSTestSupport
import Testing

/// Arguments mean exactly what was sent, against the real binary: a NUL or another control
/// character in a decoded argument or the path (or a raw NUL in the request line) is a 400
/// `InvalidParameter` that changes nothing: the cache keeps its entries and no upstream is asked.
@Suite("Argument bytes")
struct ArgumentBytesTests {
    /// The hosts the cache lists.
    private func cachedHosts(_ service: HTTPDNSDProcess) async throws -> Set<String> {
        let entries = try await service.client.get("/v1/default/cache?limit=100").json["entries"]?.array ?? []
        return Set(entries.compactMap { $0["host"]?.string })
    }

    @Test func controlCharactersInArgumentsAreA400ThatChangesNothing() async throws {
        try await withService { servers, service in
            for host in [TestZone.www, TestZone.v4Only] {
                #expect(try await service.client.get("/v1/default/resolve?host=\(host)&type=A").status == 200)
            }
            let hosts = try await cachedHosts(service)
            #expect(hosts == [TestZone.www, TestZone.v4Only])
            let queries = try await servers.unbound.queryCount()

            var requests: [(method: String, target: String)] = [
                ("GET", "/v1/default/resolve?host=\(TestZone.www)%00zzz"),
                ("GET", "/v1/default/resolve?host=\(TestZone.v4Only)%00x,\(TestZone.www)"),
                ("GET", "/v1/default/resolve?host=\(TestZone.unique())%00"),
                ("GET", "/v1/default/resolve%00junk?host=\(TestZone.www)"),
                ("GET", "/v1/default/cache?host=\(TestZone.www)%00x"),
                ("DELETE", "/v1/default/cache?host=\(TestZone.www)%00x"),
                ("DELETE", "/v1/default/cache?%00host=\(TestZone.www)"),
                ("POST", "/v1/default/cache/refresh?x=%00"),
            ]
            for escape in ["%01", "%0a", "%1F", "%7f"] {
                requests += [
                    ("GET", "/v1/default/resolve?host=\(TestZone.www)\(escape)"),
                    ("GET", "/v1/default/resolve?host=\(TestZone.www)&type=A\(escape)"),
                    ("GET", "/v1/default/resolve?host=\(TestZone.unique())&client_ip=127.0.0.1\(escape)"),
                    ("GET", "/v1/default/resolve?host=\(TestZone.www)&short=1\(escape)"),
                    ("DELETE", "/v1/default/cache?host=\(TestZone.v4Only)\(escape)"),
                ]
            }
            // Raw NUL bytes, which libmicrohttpd would read the request line up to.
            requests += [
                ("GET", "/v1/default/resolve?host=\(TestZone.unique())\0,\(TestZone.www)"),
                ("DELETE", "/v1/default/cache\0?host=\(TestZone.www)"),
                ("DELETE\0X", "/v1/default/cache?host=\(TestZone.www)"),
            ]
            for (method, target) in requests {
                let response = try await service.client.request(method, target)
                let shown = (method + " " + target).replacingOccurrences(of: "\0", with: "\\0")
                expectError(response, status: 400, code: "InvalidParameter")
                #expect(response.status == 400, "\(shown): \(response)")
                let message = response.json["error"]?["message"]?.string ?? ""
                #expect(!message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(shown): \(message)")
            }
            // A preload host is JSON-decoded: `\u0000` in it is refused as a host.
            let preload = try await service.client.post("/v1/default/preload", json: ["hosts": [.string("\(TestZone.unique())\u{0}x")]])
            expectError(preload, status: 400, code: "InvalidHost")

            #expect(try await servers.unbound.queryCount() == queries)
            #expect(try await cachedHosts(service) == hosts)
            let hit = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            #expect(hit.json["source"]?.string == "cache")
        }
    }

    /// For an account that requires signatures: a NUL is refused before the signature is read,
    /// whether the signature was made for the request a truncation would read or for the NUL
    /// itself (the signer percent-encodes it as `%00`); the entry stays, nothing is resolved.
    @Test func aSignedRequestWithANULIsA400ThatChangesNothing() async throws {
        let token = "integration-admin-token-1234", secret = "manage-secret-integration-02"
        try await withService(configure: { _, options in options.adminToken = token }) { servers, service in
            let account = loopbackAccount(
                servers,
                [
                    "requireSignedRequests": true,
                    "clientKeys": [["id": "m1", "secret": .string(secret), "role": "manage"]],
                ])
            try LoopbackGuard.checkAccount(id: "shop", account)
            let put = try await service.client.put("/v1/accounts/shop", json: account, headers: ["Authorization": "Bearer \(token)"])
            #expect(put.status == 201, "\(put)")
            func signed(_ method: String, _ path: String, _ args: [(String, String)]) throws -> ClientRequestSigner.Signed {
                try ClientRequestSigner.sign(method: method, path: path, args: args, secret: secret, t: ClientRequestSigner.expiry(in: 120))
            }
            let resolve = try signed("GET", "/v1/shop/resolve", [("host", TestZone.v4Only), ("type", "A")])
            #expect(try await service.client.get("/v1/shop/resolve?\(resolve.signedQuery(kid: "m1"))").status == 200)
            let queries = try await servers.unbound.queryCount()

            // Signed for `host=v4only...`, sent with `%00x` after it.
            let truncated = try signed("DELETE", "/v1/shop/cache", [("host", TestZone.v4Only)])
            let sentTampered = truncated.signedQuery(kid: "m1").replacingOccurrences(
                of: "host=\(TestZone.v4Only)", with: "host=\(TestZone.v4Only)%00x")
            expectError(try await service.client.delete("/v1/shop/cache?\(sentTampered)"), status: 400, code: "InvalidParameter")
            // Signed with the NUL.
            let withNUL = try signed("DELETE", "/v1/shop/cache", [("host", "\(TestZone.v4Only)\u{0}x")])
            #expect(withNUL.query.contains("%00"))
            expectError(
                try await service.client.delete("/v1/shop/cache?\(withNUL.signedQuery(kid: "m1"))"), status: 400, code: "InvalidParameter")
            let batch = try signed("GET", "/v1/shop/resolve", [("host", "\(TestZone.unique())\u{1},\(TestZone.www)")])
            expectError(
                try await service.client.get("/v1/shop/resolve?\(batch.signedQuery(kid: "m1"))"), status: 400, code: "InvalidParameter")

            let lookup = try signed("GET", "/v1/shop/cache", [("host", TestZone.v4Only), ("type", "A")])
            let cached = try await service.client.get("/v1/shop/cache?\(lookup.signedQuery(kid: "m1"))")
            #expect(cached.status == 200, "\(cached)")
            #expect(try await servers.unbound.queryCount() == queries)
        }
    }
}
