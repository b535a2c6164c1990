import Foundation
import HTTPDNSTestSupport
import Synchronization
import Testing

/// `GET`/`PUT /v1/{account}/policy` against the real binary and unbound on loopback, signed by
/// `ClientRequestSigner` (Python's hmac, not the server's code): a manage key reads and writes
/// the document, guarded by its ETag; a bad document changes nothing; a change takes effect on
/// `/resolve` and survives a restart; the account's keys and limits stay as they were.
@Suite("Policy document")
struct PolicyAPITests {
    static let token = "integration-admin-token-policy"
    static let bearer = ["Authorization": "Bearer \(token)"]
    static let resolveSecret = "resolve-secret-policy-0001"
    static let manageSecret = "manage-secret-policy-0002"
    /// Seconds ahead of now of the next request's signature expiry.
    static let expiries = Mutex(120)

    /// Sends `method path` signed with `kid`/`secret`, with `headers` and `body`.
    private func send(
        _ service: HTTPDNSDProcess, _ method: String, _ path: String, _ args: [(String, String)] = [], body: String? = nil,
        headers: [String: String] = [:], kid: String = "m1", secret: String = manageSecret
    ) async throws -> HTTPClientResponse {
        // A signed PUT is accepted once, refused or not: each request is signed with an expiry of its own.
        let offset = Self.expiries.withLock { next in
            next += 1
            return next
        }
        let signed = try ClientRequestSigner.sign(
            method: method, path: path, args: args, body: body.map { Array($0.utf8) } ?? [], secret: secret,
            t: ClientRequestSigner.expiry(in: offset))
        let response = try await service.client.request(
            method, "\(path)?\(signed.signedQuery(kid: kid))", headers: headers, body: body.map { Array($0.utf8) })
        #expect(!response.text.contains(Self.manageSecret) && !response.text.contains(Self.resolveSecret), "\(response)")
        return response
    }

    private func shop(_ servers: TestServers, _ extra: [String: TestJSON] = [:]) -> TestJSON {
        loopbackAccount(
            servers,
            [
                "requireSignedRequests": true, "maxCacheTTL": 900,
                "clientKeys": [
                    ["id": "r1", "secret": .string(Self.resolveSecret), "role": "resolve"],
                    ["id": "m1", "secret": .string(Self.manageSecret), "role": "manage"],
                ],
            ].merging(extra) { _, new in new })
    }

    @Test func aManageKeyReadsAndWritesTheDocumentGuardedByItsETag() async throws {
        try await withTestServers { servers in
            var options = servers.options()
            options.adminToken = Self.token
            let (database, newTag) = try await withHTTPDNSD(options) { service in
                try await editThePolicy(servers, service)
            }
            // Durable: a restart on the same database shows the same document and tag.
            options.databasePath = database
            try await withHTTPDNSD(options) { restarted in
                let after = try await send(restarted, "GET", "/v1/shop/policy")
                #expect(after.status == 200 && after.header("etag") == newTag, "\(after)")
                #expect(after.json["dns64Prefix"]?.string == "64:ff9b::/96", "\(after)")
            }
        }
    }

    /// The edits of `aManageKeyReadsAndWritesTheDocumentGuardedByItsETag` on a running service;
    /// returns its database and the policy's last ETag, once it has stopped.
    private func editThePolicy(_ servers: TestServers, _ service: HTTPDNSDProcess) async throws -> (String, String) {
        let created = try await service.client.put("/v1/accounts/shop", json: shop(servers), headers: Self.bearer)
        #expect(created.status == 201, "\(created)")
        // Who may read it.
        expectError(try await service.client.get("/v1/shop/policy"), status: 401, code: "Unauthorized")
        expectError(
            try await send(service, "GET", "/v1/shop/policy", kid: "r1", secret: Self.resolveSecret), status: 403, code: "Forbidden")
        let first = try await send(service, "GET", "/v1/shop/policy")
        #expect(first.status == 200 && first.text == "{}", "\(first)")
        let etag = try #require(first.header("etag"))

        let document = #"{"dns64Prefix":"64:ff9b::/96","domains":{"mode":"any","deny":["www.example.test"]}}"#
        // No If-Match: 428; a stale one: 412; a resolve key: 403; unsigned: 401. Nothing changes.
        expectError(try await send(service, "PUT", "/v1/shop/policy", body: document), status: 428, code: "PreconditionRequired")
        expectError(
            try await send(
                service, "PUT", "/v1/shop/policy", body: document, headers: ["If-Match": #""00000000000000000000000000000000""#]),
            status: 412, code: "PreconditionFailed")
        expectError(
            try await send(
                service, "PUT", "/v1/shop/policy", body: document, headers: ["If-Match": etag], kid: "r1", secret: Self.resolveSecret),
            status: 403, code: "Forbidden")
        let unsigned = try await service.client.request("PUT", "/v1/shop/policy", headers: ["If-Match": etag], body: Array(document.utf8))
        expectError(unsigned, status: 401, code: "Unauthorized")
        // A bad document: 400 naming the key and where it is.
        let bad = try await send(
            service, "PUT", "/v1/shop/policy", body: "{\n  \"dns64Prefix\": \"64:ff9b::/80\"\n}", headers: ["If-Match": etag])
        expectError(bad, status: 400, code: "InvalidParameter")
        let message = bad.json["error"]?["message"]?.string ?? ""
        #expect(message.hasPrefix("dns64Prefix:") && message.contains("line 2, column 18"), "\(message)")
        let unchanged = try await send(service, "GET", "/v1/shop/policy")
        #expect(unchanged.text == "{}" && unchanged.header("etag") == etag)
        let beforeV6 = try await send(
            service, "GET", "/v1/shop/resolve", [("host", TestZone.v4Only), ("type", "AAAA")], kid: "r1", secret: Self.resolveSecret)
        #expect(beforeV6.json["ipsv6"]?.strings == [], "\(beforeV6)")

        let put = try await send(service, "PUT", "/v1/shop/policy", body: document, headers: ["If-Match": etag])
        #expect(put.status == 200, "\(put)")
        let newTag = try #require(put.header("etag"))
        #expect(newTag != etag)
        #expect(put.json["dns64Prefix"]?.string == "64:ff9b::/96" && put.json["domains"]?["deny"]?.strings == [TestZone.www])
        // A second editor holding the first tag cannot undo it.
        expectError(
            try await send(service, "PUT", "/v1/shop/policy", body: "{}", headers: ["If-Match": etag]), status: 412,
            code: "PreconditionFailed")
        // In effect on /resolve at once.
        expectError(
            try await send(service, "GET", "/v1/shop/resolve", [("host", TestZone.www)], kid: "r1", secret: Self.resolveSecret),
            status: 403, code: "DomainNotAllowed")
        let v6 = try await send(
            service, "GET", "/v1/shop/resolve", [("host", TestZone.v4Only), ("type", "AAAA")], kid: "r1", secret: Self.resolveSecret)
        #expect(v6.json["ipsv6"]?.strings == [DNS64IntegrationTests.synthesized] && v6.json["dns64"]?.bool == true, "\(v6)")
        // The rest of the account is as it was: keys, limits.
        let account = try await service.client.get("/v1/accounts/shop", headers: Self.bearer)
        #expect(account.json["config"]?["clientKeys"]?.array?.count == 2, "\(account)")
        #expect(account.json["config"]?["maxCacheTTL"]?.int == 900 && account.json["config"]?["requireSignedRequests"]?.bool == true)
        #expect(account.json["config"]?["dns64Prefix"]?.string == "64:ff9b::/96")
        #expect(service.log().contains("audit: tenant PUT /v1/shop/policy"), "no audit line")
        #expect(await service.stop() == 0)
        return (service.databasePath, newTag)
    }
}
