import Foundation
import HTTPDNSTestSupport
import Testing

/// An account's `queryLog` travels with its configuration through Redis.
extension ReplicaTests {
    /// The log turned on through one replica shows on every replica and logs there.
    @Test func aQueryLogPutOnOneReplicaLogsOnTheOthers() async throws {
        try await withReplicaCluster { cluster in
            let account = cluster.account(["queryLog": ["enabled": true, "retention": 600, "clientPrefixV4": 8]])
            let put = try await cluster.replicas[0].client.put("/v1/accounts/shop", json: account, headers: cluster.admin)
            #expect(put.status == 201, "\(put)")
            for replica in cluster.replicas {
                let logged = try await poll(for: 20, every: .milliseconds(200)) { () -> TestJSON? in
                    let config = try await replica.client.get("/v1/accounts/shop", headers: cluster.admin)
                    return config.status == 200 ? config.json["config"]?["queryLog"] : nil
                }
                #expect(logged?["retention"]?.int == 600, "replica on \(replica.port): \(String(describing: logged))")
                let name = TestZone.unique("rq")
                #expect(try await replica.client.get("/v1/shop/resolve?host=\(name)&type=A").status == 200)
                let entries = try await poll(for: 20, every: .milliseconds(200)) { () -> [TestJSON]? in
                    let page = try await replica.client.get("/v1/shop/querylog?host=\(name)")
                    guard let entries = page.json["entries"]?.array, !entries.isEmpty else { return nil }
                    return entries
                }
                #expect(entries?.first?["client"]?.string == "127.0.0.0/8", "replica on \(replica.port)")
            }
        }
    }
}
