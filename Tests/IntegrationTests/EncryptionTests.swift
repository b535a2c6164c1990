import Foundation
import HTTPDNSTestSupport
import Testing

/// Encrypted requests and answers (docs/encryption.md) against the real binary, with a client
/// whose cryptography is Python's (`scripts/test/enc_client.py`), not the server's.
@Suite("Encrypted requests")
struct EncryptionTests {
    static let key = "8f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0"

    /// Account `sec` (an aesSecretKey, plain requests allowed) and `strict` (requireEncryption).
    private func withEncryptedAccounts(_ body: (TestServers, HTTPDNSDProcess, EncryptedClient) async throws -> Void) async throws {
        try await withService(configure: { servers, options in
            options.config = [
                "accounts": [
                    "default": loopbackAccount(servers),
                    "sec": loopbackAccount(servers, ["aesSecretKey": .string(Self.key)]),
                    "strict": loopbackAccount(servers, ["aesSecretKey": .string(Self.key), "requireEncryption": true]),
                ]
            ]
        }) { servers, service in
            try await body(servers, service, EncryptedClient(port: service.port, key: Self.key))
        }
    }

    @Test func anEncryptedResolveIsAnsweredSealedOnAMissAndOnAHit() async throws {
        try await withEncryptedAccounts { _, _, client in
            for (round, source) in ["upstream", "cache"].enumerated() {
                let exchange = try await client.send("/v1/sec/resolve", query: "host=\(TestZone.www)&type=A")
                #expect(exchange.status == 200, "round \(round): \(exchange)")
                #expect(exchange.sealed && exchange.opened, "round \(round): \(exchange)")
                #expect(exchange.body["host"]?.string == TestZone.www)
                #expect(Set(exchange.body["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
                #expect(exchange.body["source"]?.string == source, "round \(round)")
            }
        }
    }

    @Test func anErrorAfterOpeningIsSealedToo() async throws {
        try await withEncryptedAccounts { _, _, client in
            let exchange = try await client.send("/v1/sec/resolve", query: "host=bad..name")
            #expect(exchange.status == 400)
            #expect(exchange.sealed && exchange.opened, "\(exchange)")
            #expect(exchange.body["error"]?["code"]?.string == "InvalidHost")
        }
    }

    @Test func theCacheLookupAndPreloadRoundTripEncrypted() async throws {
        try await withEncryptedAccounts { _, service, client in
            let preload = try await client.send(
                "/v1/sec/preload", method: "POST", body: #"{"hosts":["\#(TestZone.v4Only)"],"type":"A"}"#)
            #expect(preload.status == 200, "\(preload)")
            #expect(preload.sealed && preload.opened, "\(preload)")
            #expect(preload.body["resolved"]?.int == 1)
            #expect(preload.body["results"]?[0]?["ips"]?.strings == TestZone.v4OnlyV4)

            let lookup = try await client.send("/v1/sec/cache", query: "host=\(TestZone.v4Only)&type=A")
            #expect(lookup.status == 200, "\(lookup)")
            #expect(lookup.sealed && lookup.opened)
            #expect(lookup.body["source"]?.string == "cache")
            #expect(lookup.body["ips"]?.strings == TestZone.v4OnlyV4)

            // Plain requests still work on an account that does not require encryption.
            let plain = try await service.client.get("/v1/sec/cache?host=\(TestZone.v4Only)&type=A")
            #expect(plain.status == 200)
            #expect(plain.header("content-type")?.hasPrefix("application/json") == true)
        }
    }

    @Test(arguments: [EncryptedClient.Tamper.enc, .body])
    func aTamperedPreloadIs401InClearAndCachesNothing(tamper: EncryptedClient.Tamper) async throws {
        try await withEncryptedAccounts { servers, service, client in
            let host = TestZone.unique()
            let before = try await servers.unbound.queryCount()
            let refused = try await client.send("/v1/sec/preload", method: "POST", body: #"{"hosts":["\#(host)"]}"#, tamper: tamper)
            #expect(refused.status == 401, "\(refused)")
            #expect(!refused.sealed)
            #expect(refused.body["error"]?["code"]?.string == "Unauthorized")
            #expect(try await servers.unbound.queryCount() == before)
            expectError(try await service.client.get("/v1/sec/cache?host=\(host)&type=A"), status: 404, code: "NotFound")
        }
    }

    @Test func requireEncryptionRefusesPlainRequestsEvenForACachedName() async throws {
        try await withEncryptedAccounts { _, service, client in
            let encrypted = try await client.send("/v1/strict/resolve", query: "host=\(TestZone.www)&type=A")
            #expect(encrypted.status == 200 && encrypted.opened, "\(encrypted)")
            // The name is cached now: a plain request must not be answered from the cache either.
            for path in [
                "/v1/strict/resolve?host=\(TestZone.www)&type=A", "/v1/strict/cache?host=\(TestZone.www)&type=A",
                "/v1/strict/stats",
            ] {
                let plain = try await service.client.get(path)
                expectError(plain, status: 403, code: "Forbidden")
                #expect(plain.json["error"]?["message"]?.string?.contains("requires encrypted requests") == true)
            }
            let stats = try await client.send("/v1/strict/stats")
            #expect(stats.status == 200 && stats.opened, "\(stats)")
        }
    }

    @Test func noAnswerCarriesTheKey() async throws {
        try await withEncryptedAccounts { _, service, client in
            _ = try await client.send("/v1/sec/resolve", query: "host=\(TestZone.www)")
            let metrics = try await service.client.get("/metrics")
            #expect(!metrics.text.contains(Self.key))
            #expect(!service.log().contains(Self.key))
        }
    }
}

/// Encryption together with client signatures: the signature covers `enc` and the sealed body as
/// sent (signed by `ClientRequestSigner`), and the role is checked again on the decrypted
/// arguments.
@Suite("Encrypted and signed requests")
struct EncryptedSignedTests {
    static let token = "integration-admin-token-enc-5678"
    static let resolveSecret = "resolve-secret-encrypted-0001"
    static let manageSecret = "manage-secret-encrypted-00002"

    private func withSignedEncryptedAccount(_ body: (TestServers, HTTPDNSDProcess, EncryptedClient) async throws -> Void) async throws {
        try await withService(configure: { _, options in options.adminToken = Self.token }) { servers, service in
            let account = loopbackAccount(
                servers,
                [
                    "requireSignedRequests": true, "requireEncryption": true, "aesSecretKey": .string(EncryptionTests.key),
                    "clientKeys": [
                        ["id": "r1", "secret": .string(Self.resolveSecret), "role": "resolve"],
                        ["id": "m1", "secret": .string(Self.manageSecret), "role": "manage"],
                    ],
                ])
            try LoopbackGuard.checkAccount(id: "shop", account)
            let put = try await service.client.put("/v1/accounts/shop", json: account, headers: ["Authorization": "Bearer \(Self.token)"])
            #expect(put.status == 201, "\(put)")
            #expect(!put.text.contains(EncryptionTests.key))
            try await body(servers, service, EncryptedClient(port: service.port, key: EncryptionTests.key))
        }
    }

    /// Seals `query`/`body`, signs the sealed request with `kid`/`secret`, sends it, and opens a
    /// sealed answer. Returns the response and the opened body (nil when not sealed or not opened).
    private func send(
        _ service: HTTPDNSDProcess, _ client: EncryptedClient, _ method: String, _ path: String, query: String = "",
        body: String = "", kid: String, secret: String
    ) async throws -> (HTTPClientResponse, TestJSON?) {
        let prepared = try await client.prepare(path, method: method, query: query, body: body)
        let signed = try ClientRequestSigner.sign(
            method: method, path: path, args: [("enc", prepared.enc)], body: prepared.body, secret: secret,
            t: ClientRequestSigner.expiry(in: 120))
        let response = try await service.client.request(
            method, "\(path)?\(signed.signedQuery(kid: kid))", body: prepared.body.isEmpty ? nil : prepared.body)
        guard response.header("content-type") == "application/octet-stream" else { return (response, nil) }
        return (response, try await client.openAnswer(response.body, path, method: method, prepared: prepared))
    }

    @Test func signedEncryptedRequestsAreServedAndRolesAreCheckedOnTheDecryptedArguments() async throws {
        try await withSignedEncryptedAccount { _, service, client in
            let (preload, preloaded) = try await send(
                service, client, "POST", "/v1/shop/preload", body: #"{"hosts":["\#(TestZone.www)"],"type":"A"}"#, kid: "m1",
                secret: Self.manageSecret)
            #expect(preload.status == 200, "\(preload)")
            #expect(preloaded?["resolved"]?.int == 1, "\(String(describing: preloaded))")

            // A resolve key may look one host up (the outer request has only enc) ...
            let (lookup, found) = try await send(
                service, client, "GET", "/v1/shop/cache", query: "host=\(TestZone.www)&type=A", kid: "r1", secret: Self.resolveSecret)
            #expect(lookup.status == 200, "\(lookup)")
            #expect(found?["source"]?.string == "cache")
            #expect(Set(found?["ips"]?.strings ?? []) == Set(TestZone.wwwV4))

            // ... but not list the cache: 403, sealed, since the request was opened.
            let (list, refused) = try await send(
                service, client, "GET", "/v1/shop/cache", query: "limit=10", kid: "r1", secret: Self.resolveSecret)
            #expect(list.status == 403, "\(list)")
            #expect(refused?["error"]?["code"]?.string == "Forbidden")

            // Unsigned: the signature check comes first, in clear.
            let unsigned = try await client.send("/v1/shop/resolve", query: "host=\(TestZone.www)")
            #expect(unsigned.status == 401 && !unsigned.sealed, "\(unsigned)")
            #expect(unsigned.body["error"]?["code"]?.string == "Unauthorized")
            for secret in [Self.resolveSecret, Self.manageSecret, EncryptionTests.key] {
                #expect(!service.log().contains(secret))
            }
        }
    }
}
