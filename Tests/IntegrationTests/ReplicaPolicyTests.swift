import Foundation
import HTTPDNSTestSupport
import Testing

/// The tenant's policy document travels through Redis like every account change.
extension ReplicaTests {
    /// Every replica gives the same ETag for the same document; a PUT through one replica is
    /// seen, with its new ETag and in its answers, on the others within a second.
    @Test func aPolicyPutThroughOneReplicaIsSeenByTheOthersWithinASecond() async throws {
        try await withReplicaCluster { cluster in
            let created = try await cluster.replicas[0].client.put("/v1/accounts/shop", json: cluster.account(), headers: cluster.admin)
            #expect(created.status == 201, "\(created)")
            var tags: [String] = []
            for replica in cluster.replicas {
                let document = try await poll(for: 20) { () -> HTTPClientResponse? in
                    let response = try await replica.client.get("/v1/shop/policy")
                    return response.status == 200 ? response : nil
                }
                tags.append(try #require(document?.header("etag"), "replica on \(replica.port) never had the account"))
            }
            #expect(Set(tags).count == 1, "replicas disagree on the ETag: \(tags)")

            let put = try await cluster.replicas[1].client.request(
                "PUT", "/v1/shop/policy", headers: ["If-Match": tags[0]], body: Array(#"{"dns64Prefix":"64:ff9b::/96"}"#.utf8))
            #expect(put.status == 200, "\(put)")
            let newTag = try #require(put.header("etag"))
            let acknowledged = Date()
            for index in [0, 2] {
                let replica = cluster.replicas[index]
                let seen = try await poll(for: 10, every: .milliseconds(20)) { () -> Date? in
                    try await replica.client.get("/v1/shop/policy").header("etag") == newTag ? Date() : nil
                }
                let delay = try #require(seen, "replica on \(replica.port) never saw the change").timeIntervalSince(acknowledged)
                #expect(delay < 1, "replica on \(replica.port) saw the change after \(delay) s")
                let answer = try await replica.client.get("/v1/shop/resolve?host=\(TestZone.v4Only)&type=AAAA")
                #expect(answer.json["ipsv6"]?.strings == [DNS64IntegrationTests.synthesized], "\(answer)")
            }
            // The old tag is stale on every replica.
            for replica in cluster.replicas {
                let stale = try await replica.client.request(
                    "PUT", "/v1/shop/policy", headers: ["If-Match": tags[0]], body: Array("{}".utf8))
                expectError(stale, status: 412, code: "PreconditionFailed")
            }
        }
    }
}
