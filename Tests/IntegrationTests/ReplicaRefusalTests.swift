import Foundation
import HTTPDNSTestSupport
import Testing

/// What replicas sharing a real Redis refuse, and that a refusal holds: a signed change is
/// accepted once across all replicas (Redis is the replay memory), and an account change
/// refused while Redis is paused does not happen when it resumes.
extension ReplicaTests {
    static let manageSecret = "manage-secret-replicas-03"

    /// `method path?args` signed with the manage key `m1`, valid for `offset` seconds.
    private func signed(_ method: String, _ path: String, _ args: [(String, String)], offset: Int) throws -> String {
        let signed = try ClientRequestSigner.sign(
            method: method, path: path, args: args, secret: Self.manageSecret, t: ClientRequestSigner.expiry(in: offset))
        return path + "?" + signed.signedQuery(kid: "m1")
    }

    /// Whether `replica` holds `TestZone.www` for account shop (a signed cache lookup).
    private func holdsWWW(_ replica: HTTPDNSDProcess, offset: Int) async throws -> Bool {
        let lookup = try await replica.client.get(
            try signed("GET", "/v1/shop/cache", [("host", TestZone.www), ("type", "A")], offset: offset))
        guard lookup.status == 200 || lookup.status == 404 else { throw HarnessError("cache lookup: \(lookup)") }
        return lookup.status == 200
    }

    /// Resolves `TestZone.www` for shop on `replica`, so that it is cached there.
    private func cacheWWW(_ replica: HTTPDNSDProcess, offset: Int) async throws {
        let answer = try await replica.client.get(try signed("GET", "/v1/shop/resolve", [("host", TestZone.www)], offset: offset))
        guard answer.status == 200 else { throw HarnessError("resolve: \(answer)") }
    }

    /// A signed cache DELETE answered by replica 1, sent byte for byte to replica 2, is refused
    /// there (401) and evicts nothing; with Redis paused a signed change is refused (503) and
    /// evicts nothing either.
    @Test func aSignedChangeAnsweredByOneReplicaIsRefusedByAnother() async throws {
        try await withReplicaCluster { cluster in
            let keys: TestJSON = [["id": "m1", "secret": .string(Self.manageSecret), "role": "manage"]]
            let put = try await cluster.replicas[0].client.put(
                "/v1/accounts/shop", json: cluster.account(["requireSignedRequests": true, "clientKeys": keys]), headers: cluster.admin)
            #expect(put.status == 201, "\(put)")
            let (first, second) = (cluster.replicas[0], cluster.replicas[1])
            for replica in [first, second] {
                let served = try await poll(for: 20) { () -> Bool? in
                    (try? await cacheWWW(replica, offset: 100)) == nil ? nil : true
                }
                #expect(served == true, "replica on \(replica.port) never served account shop")
            }
            let delete = try signed("DELETE", "/v1/shop/cache", [("host", TestZone.www)], offset: 120)
            let answered = try await first.client.delete(delete)
            #expect(answered.status == 200, "\(answered)")
            // The eviction reaches replica 2 by Redis; cache the host there again, then replay.
            let evicted = try await poll(for: 20) { try await holdsWWW(second, offset: 101) ? nil : true }
            #expect(evicted == true)
            try await cacheWWW(second, offset: 102)
            let replayed = try await second.client.delete(delete)
            expectError(replayed, status: 401, code: "Unauthorized")
            #expect(replayed.json["error"]?["message"]?.string?.hasPrefix("replayed signature") == true, "\(replayed)")
            #expect(try await holdsWWW(second, offset: 103), "the replay evicted on replica 2")

            cluster.redis.pause()
            let refused = try await second.client.delete(try signed("DELETE", "/v1/shop/cache", [("host", TestZone.www)], offset: 121))
            cluster.redis.resume()
            expectError(refused, status: 503, code: "ServiceUnavailable")
            #expect(refused.header("Retry-After") != nil)
            #expect(try await holdsWWW(second, offset: 104), "a change whose replay check could not be made evicted")
        }
    }

    /// Redis paused: an account PUT is refused (503, "nothing was changed"). After Redis
    /// resumes, the write that waited in its socket is refused by its deadline: the account
    /// exists nowhere, while a PUT made afterwards reaches every replica.
    @Test func anAccountChangeRefusedWhileRedisIsPausedNeverHappens() async throws {
        try await withReplicaCluster { cluster in
            try await waitUntilSubscribed(cluster)
            cluster.redis.pause()
            let refused = try await cluster.replicas[0].client.put("/v1/accounts/ghost", json: cluster.account(), headers: cluster.admin)
            cluster.redis.resume()
            expectError(refused, status: 503, code: "ServiceUnavailable")
            #expect(refused.json["error"]?["message"]?.string?.contains("nothing was changed") == true, "\(refused)")
            #expect(cluster.replicas[0].log().contains("refused 503"))

            // Sent after the refused one on the same connection: once it is everywhere, Redis has
            // run (or refused) the earlier write, and every replica has had its message.
            let later = try await poll(for: 30, every: .milliseconds(200)) { () -> HTTPClientResponse? in
                let response = try await cluster.replicas[0].client.put(
                    "/v1/accounts/later", json: cluster.account(["maxCacheTTL": 600]), headers: cluster.admin)
                return response.status == 503 ? nil : response
            }
            #expect(later?.status == 201, "\(String(describing: later))")
            try await expectEverywhere(cluster, "later", maxCacheTTL: 600)
            #expect(try cluster.redis.cli(["HEXISTS", "it:accounts", "ghost"]) == "0", "Redis stored the refused account")
            for replica in cluster.replicas {
                let ghost = try await replica.client.get("/v1/accounts/ghost", headers: cluster.admin)
                #expect(ghost.status == 404, "replica on \(replica.port) holds the refused account: \(ghost)")
            }
        }
    }
}
