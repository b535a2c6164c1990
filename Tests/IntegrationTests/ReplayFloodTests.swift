import Foundation
import HTTPDNSTestSupport
import Testing

/// The replay memory of signed changes against the real binary, flooded the way an app key
/// holder could: signed requests from many loopback source addresses
/// (`scripts/test/signed_flood.py`), then the back office's `manage` key makes its changes.
@Suite("Replay memory under a flood", .serialized)
struct ReplayFloodTests {
    static let token = "integration-admin-token-5678"
    static let resolveSecret = "resolve-secret-flood-01"
    static let manageSecret = "manage-secret-flood-02"
    /// More signed requests than the memory's 10 000 entries per account.
    static let floodSize = 10_500

    /// Account `shop` requiring signatures, keys `r1` (resolve) and `m1` (manage).
    private func withKeyedService(_ body: (HTTPDNSDProcess) async throws -> Void) async throws {
        try await withService(configure: { _, options in options.adminToken = Self.token }) { servers, service in
            let keys: [TestJSON] = [
                ["id": "r1", "secret": .string(Self.resolveSecret), "role": "resolve"],
                ["id": "m1", "secret": .string(Self.manageSecret), "role": "manage"],
            ]
            let account = loopbackAccount(servers, ["requireSignedRequests": true, "clientKeys": .array(keys)])
            try LoopbackGuard.checkAccount(id: "shop", account)
            let put = try await service.client.put("/v1/accounts/shop", json: account, headers: ["Authorization": "Bearer \(Self.token)"])
            #expect(put.status == 201, "\(put)")
            try await body(service)
        }
    }

    /// Runs the flood script; returns how many answers had each status.
    private func flood(
        _ service: HTTPDNSDProcess, kid: String, secret: String, mode: String, addresses: Int, perAddress: Int
    ) async throws -> [String: Int] {
        let directory = try TestPaths.makeTemporaryDirectory("signed-flood")
        let out = directory.appendingPathComponent("result.json")
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/signed_flood.py").path
        let arguments = [script, String(service.port), "shop", kid, secret, mode, String(addresses), String(perAddress), out.path]
        let (status, output) = try await ExternalTool.run("python3", arguments, timeout: 300, in: directory)
        guard status == 0, let data = try? Data(contentsOf: out),
            let result = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let statuses = result["statuses"] as? [String: Int]
        else {
            throw HarnessError("signed_flood.py failed (\(status)): \(output)")
        }
        return statuses
    }

    /// The manage key's signed cache delete and preload, from 127.0.0.1.
    private func manageChangesSucceed(_ service: HTTPDNSDProcess, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let args = [("host", TestZone.www)]
        let delete = try ClientRequestSigner.sign(
            method: "DELETE", path: "/v1/shop/cache", args: args, secret: Self.manageSecret, t: ClientRequestSigner.expiry(in: 120))
        let deleted = try await service.client.delete("/v1/shop/cache?" + delete.signedQuery(kid: "m1"))
        #expect(deleted.status == 200, "the manage key's DELETE /cache: \(deleted)", sourceLocation: sourceLocation)
        let body = TestJSON.object(["hosts": [.string(TestZone.www)]]).encoded()
        let preload = try ClientRequestSigner.sign(
            method: "POST", path: "/v1/shop/preload", body: Array(body.utf8), secret: Self.manageSecret,
            t: ClientRequestSigner.expiry(in: 121))
        let preloaded = try await service.client.request(
            "POST", "/v1/shop/preload?" + preload.signedQuery(kid: "m1"), headers: ["Content-Type": "application/json"],
            body: Array(body.utf8))
        #expect(preloaded.status == 200, "the manage key's preload: \(preloaded)", sourceLocation: sourceLocation)
    }

    /// 10 500 signed RFC 8484 POSTs with the resolve key from 100 addresses are all answered
    /// (queries, not changes), and take nothing the manage key needs afterwards.
    @Test func aResolveKeyFloodOfDNSPostsLeavesTheManageKeyItsChanges() async throws {
        try await withKeyedService { service in
            let statuses = try await flood(
                service, kid: "r1", secret: Self.resolveSecret, mode: "dns", addresses: 100, perAddress: Self.floodSize / 100)
            #expect(statuses == ["200": Self.floodSize], "\(statuses)")
            try await manageChangesSucceed(service)
        }
    }

    /// One client flooding signed changes with the manage key fills its share (a quarter of the
    /// memory) and gets 503s; the same key from another address still makes its changes.
    @Test func oneClientFloodingChangesLeavesRoomForTheOthers() async throws {
        try await withKeyedService { service in
            let statuses = try await flood(
                service, kid: "m1", secret: Self.manageSecret, mode: "delete", addresses: 1, perAddress: Self.floodSize)
            #expect(statuses["200"] == 2_500, "\(statuses)")
            #expect(statuses["503"] == Self.floodSize - 2_500, "\(statuses)")
            try await manageChangesSucceed(service)
        }
    }
}
