import Foundation
import HTTPDNSTestSupport
import Testing

/// /v1/accounts admin API.
@Suite("Admin API")
struct AdminAPITests {
    static let token = "integration-admin-token-1234"
    static let bearer = ["Authorization": "Bearer \(token)"]

    @Test func adminAPIIs403WithoutAConfiguredToken() async throws {
        try await withService { _, service in
            expectError(try await service.client.get("/v1/accounts"), status: 403, code: "Forbidden")
            expectError(try await service.client.get("/v1/accounts", headers: Self.bearer), status: 403, code: "Forbidden")
        }
    }

    @Test func wrongOrMissingTokenIs401() async throws {
        try await withService(configure: { _, options in options.adminToken = Self.token }) { _, service in
            expectError(try await service.client.get("/v1/accounts"), status: 401, code: "Unauthorized")
            expectError(
                try await service.client.get("/v1/accounts", headers: ["Authorization": "Bearer wrong-token-xyz"]),
                status: 401, code: "Unauthorized")
            expectError(
                try await service.client.get("/v1/accounts/default", headers: ["Authorization": Self.token]),
                status: 401, code: "Unauthorized")
            #expect(try await service.client.get("/v1/accounts", headers: Self.bearer).status == 200)
        }
    }

    @Test func putCreatesAnAccountThatResolvesAndGetRedactsSecrets() async throws {
        try await withService(configure: { _, options in options.adminToken = Self.token }) { servers, service in
            expectError(
                try await service.client.get("/v1/tenant1/resolve?host=\(TestZone.www)"),
                status: 404, code: "UnknownAccount")
            let account = loopbackAccount(
                servers, upstreams: [servers.json.upstreamSpec],
                [
                    "accessKeyId": "AKID-visible", "accessKeySecret": "very-secret-value",
                    "secretKey": "another-secret-value", "ipv6Enable": true,
                ])
            try LoopbackGuard.checkAccount(id: "tenant1", account)
            let put = try await service.client.put("/v1/accounts/tenant1", json: account, headers: Self.bearer)
            #expect(put.status == 201, "a new account is created: \(put)")
            #expect(!put.text.contains("very-secret-value") && !put.text.contains("another-secret-value"))

            let resolved = try await service.client.get("/v1/tenant1/resolve?host=\(TestZone.www)&type=auto")
            #expect(resolved.status == 200)
            #expect(Set(resolved.json["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(resolved.json["ipsv6"]?.strings == TestZone.wwwV6)  // the account's ipv6Enable applies
            #expect(try await servers.json.requests(for: TestZone.www).count >= 1)

            let one = try await service.client.get("/v1/accounts/tenant1", headers: Self.bearer)
            #expect(one.status == 200)
            #expect(!one.text.contains("very-secret-value") && !one.text.contains("another-secret-value"))
            #expect(one.text.contains("***"))
            let list = try await service.client.get("/v1/accounts", headers: Self.bearer)
            let ids = list.json["accounts"]?.array?.compactMap { $0["id"]?.string } ?? []
            #expect(Set(ids).isSuperset(of: ["default", "tenant1"]), "\(list)")
            #expect(!list.text.contains("very-secret-value"))
            let listed = list.json["accounts"]?.array?.first { $0["id"]?.string == "tenant1" }
            #expect(listed?["config"]?["accessKeySecret"]?.string == "***")
            #expect(listed?["config"]?["secretKey"]?.string == "***")
        }
    }

    @Test func deleteRemovesTheAccount() async throws {
        try await withService(configure: { _, options in options.adminToken = Self.token }) { servers, service in
            let account = loopbackAccount(servers)
            let put = try await service.client.put("/v1/accounts/gone1", json: account, headers: Self.bearer)
            try #require(put.status / 100 == 2, "\(put)")  // create status itself: putCreatesAnAccount…
            #expect(try await service.client.get("/v1/gone1/resolve?host=\(TestZone.www)").status == 200)
            let deleted = try await service.client.delete("/v1/accounts/gone1", headers: Self.bearer)
            #expect(deleted.status == 200)
            #expect(deleted.json["deleted"]?.string == "gone1")
            expectError(
                try await service.client.get("/v1/gone1/resolve?host=\(TestZone.www)"),
                status: 404, code: "UnknownAccount")
            expectError(
                try await service.client.get("/v1/accounts/gone1", headers: Self.bearer),
                status: 404, code: "UnknownAccount")
        }
    }

    @Test func putWithAnInvalidConfigIs400AndChangesNothing() async throws {
        try await withService(configure: { _, options in options.adminToken = Self.token }) { servers, service in
            let bad = loopbackAccount(servers, ["cacheCountLimit": "lots", "noSuchKey": 1])
            let response = try await service.client.put("/v1/accounts/broken1", json: bad, headers: Self.bearer)
            #expect(response.status == 400, "\(response)")
            expectError(
                try await service.client.get("/v1/broken1/resolve?host=\(TestZone.www)"),
                status: 404, code: "UnknownAccount")
        }
    }
}
