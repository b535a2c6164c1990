import Foundation
import HTTPDNSTestSupport
import Testing

/// The tenant's policy document travels through Redis like every account change.
extension ReplicaTests {
    /// DNS64 and a custom answer: both policy keys a replica must apply from the change it reads.
    static let policyWithARule = #"""
        {"dns64Prefix":"64:ff9b::/96","rules":[{"name":"office","hosts":["ruled.example.test"],"answer":{"ipv4":["192.0.2.77"]}}]}
        """#

    /// Every replica gives the same ETag for the same document; a PUT through one replica is
    /// seen, with its new ETag and in its answers (a synthesized AAAA, a rule's address), on the
    /// others within a second.
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
                "PUT", "/v1/shop/policy", headers: ["If-Match": tags[0]], body: Array(Self.policyWithARule.utf8))
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
                let ruled = try await replica.client.get("/v1/shop/resolve?host=ruled.example.test")
                #expect(ruled.json["ips"]?.strings == ["192.0.2.77"] && ruled.json["source"]?.string == "rule", "\(ruled)")
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
