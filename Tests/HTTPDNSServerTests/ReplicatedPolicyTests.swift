import Foundation
import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSTestSupport
import Testing

/// The policy document with replicas sharing their accounts (an in-memory shared store with
/// Redis's rules; the real Redis is in IntegrationTests/ReplicaPolicyTests): a PUT is written
/// through the shared store and reaches the other replica, and one made against a version the
/// store no longer holds (a change through another replica not yet seen here) is refused there.
@Suite struct ReplicatedPolicyTests {
    private func put(_ replica: ReplicationHandlerTests.Replica, _ body: String, ifMatch: String?) -> Exchange {
        var request = HTTPRequest(method: "PUT", path: "/v1/default/policy", body: Array(body.utf8))
        request.ifMatch = ifMatch
        return Exchange(replica.fixture.handle(request)).awaited()
    }

    @Test func aPutReachesTheOtherReplicaWithTheSameETag() throws {
        let shared = InMemorySharedAccounts()
        let first = ReplicationHandlerTests.Replica(shared), second = ReplicationHandlerTests.Replica(shared)
        let etag = try #require(first.fixture.get("/v1/default/policy").header("ETag"))
        #expect(second.fixture.get("/v1/default/policy").header("ETag") == etag)
        let done = put(first, #"{"dns64Prefix":"64:ff9b::/96"}"#, ifMatch: etag)
        #expect(done.status == 200, "\(done.text)")
        #expect(shared.records["default"]?.config?.dns64Prefix?.description == "64:ff9b::/96")
        #expect(second.fixture.engine.config.dns64Prefix != nil)
        #expect(second.fixture.get("/v1/default/policy").header("ETag") == done.header("ETag"))
        // The first tag is stale on both.
        #expect(put(second, "{}", ifMatch: etag).status == 412)
    }

    @Test func aPutAgainstAVersionTheSharedStoreNoLongerHoldsIsRefused() throws {
        let shared = InMemorySharedAccounts()
        let first = ReplicationHandlerTests.Replica(shared)
        let etag = try #require(first.fixture.get("/v1/default/policy").header("ETag"))
        // Another replica changed the account; its message has not reached this one.
        var elsewhere = first.fixture.engine.config
        elsewhere.domains = try DomainPolicy(mode: .any, allow: [], deny: ["ads.example.test"])
        shared.writeUnannounced(id: "default", config: elsewhere)
        let refused = put(first, #"{"dns64Prefix":"64:ff9b::/96"}"#, ifMatch: etag)
        #expect(refused.status == 412 && refused.errorCode == "PreconditionFailed", "\(refused.text)")
        #expect(shared.records["default"]?.config?.domains == elsewhere.domains, "the other change is kept")
        #expect(shared.records["default"]?.config?.dns64Prefix == nil)
        #expect(first.fixture.engine.config.dns64Prefix == nil)
    }
}
