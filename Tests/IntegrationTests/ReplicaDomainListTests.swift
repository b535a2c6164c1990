import Foundation
import HTTPDNSTestSupport
import Testing

/// An account's domain list travels with its configuration through Redis.
extension ReplicaTests {
    /// A list put through one replica refuses the name on every replica, once each has applied
    /// the change, and every replica shows the list.
    @Test func aDomainListPutOnOneReplicaRefusesOnTheOthers() async throws {
        try await withReplicaCluster { cluster in
            let put = try await cluster.replicas[0].client.put(
                "/v1/accounts/shop", json: cluster.account(), headers: cluster.admin)
            #expect(put.status == 201, "\(put)")
            for replica in cluster.replicas {
                let served = try await poll(for: 20) { () -> Bool? in
                    try await replica.client.get("/v1/shop/resolve?host=\(TestZone.www)").status == 200 ? true : nil
                }
                #expect(served == true, "replica on \(replica.port) never served \(TestZone.www)")
            }
            let listed = cluster.account(["domains": ["mode": "listed", "allow": [.string(TestZone.v4Only)]]])
            let change = try await cluster.replicas[1].client.put("/v1/accounts/shop", json: listed, headers: cluster.admin)
            #expect(change.status == 200, "\(change)")
            for replica in cluster.replicas {
                let refused = try await poll(for: 20) { () -> Bool? in
                    try await replica.client.get("/v1/shop/resolve?host=\(TestZone.www)").status == 403 ? true : nil
                }
                #expect(refused == true, "replica on \(replica.port) still answers \(TestZone.www)")
                expectError(
                    try await replica.client.get("/v1/shop/resolve?host=\(TestZone.www)"), status: 403, code: "DomainNotAllowed")
                #expect(try await replica.client.get("/v1/shop/resolve?host=\(TestZone.v4Only)").status == 200)
                let config = try await replica.client.get("/v1/accounts/shop", headers: cluster.admin)
                #expect(config.json["config"]?["domains"]?["allow"]?.strings == [TestZone.v4Only], "\(config)")
            }
        }
    }
}
