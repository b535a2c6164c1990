import Foundation
import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSTestSupport
import Testing

/// The admin and cache handlers with replication over an in-memory shared store:
/// two services stand for two replicas. The real Redis is in IntegrationTests/ReplicaTests.
@Suite struct ReplicationHandlerTests {
    static let token = "s3cr3t-admin"
    static let bearer = "Bearer \(token)"
    static let body =
        #"{"upstreams":["doh:http://127.0.0.1:8053/dns-query"],"localDNSFallback":false,"maxCacheTTL":120,"aesSecretKey":"\#(String(repeating: "ab", count: 32))"}"#

    /// One replica: a fixture whose service replicates through `shared`.
    struct Replica {
        let fixture = ServiceFixture(adminToken: ReplicationHandlerTests.token)
        let replicator: AccountReplicator

        init(_ shared: InMemorySharedAccounts) {
            replicator = AccountReplicator(
                records: [AccountRecord(id: "default", version: 0, config: fixture.registry.engine("default")!.config)],
                registry: fixture.registry, localStore: fixture.accountStore)
            shared.join(replicator)
            fixture.service.setReplication(replicator)
            replicator.connected()
        }

        func put(_ id: String, _ body: String = ReplicationHandlerTests.body) -> Exchange {
            fixture.send("PUT", "/v1/accounts/\(id)", authorization: ReplicationHandlerTests.bearer, body: Array(body.utf8))
        }
    }

    /// A PUT through one replica is written to the shared store, then applied and stored (as a
    /// record, secrets included) on both; its DELETE likewise.
    @Test func aChangeThroughOneReplicaIsAppliedOnBoth() throws {
        let shared = InMemorySharedAccounts()
        let first = Replica(shared), second = Replica(shared)
        #expect(first.put("shop").status == 201)
        #expect(shared.records["shop"]?.config?.maxCacheTTL == 120)
        for replica in [first, second] {
            #expect(replica.fixture.registry.engine("shop")?.config.maxCacheTTL == 120)
            let saved = try #require(replica.fixture.accountStore.calls.last { $0.id == "shop" }?.json)
            #expect(try AccountRecord.stored(id: "shop", json: saved) == shared.records["shop"])
            #expect(saved.contains(String(repeating: "ab", count: 32)))
        }
        let delete = second.fixture.send("DELETE", "/v1/accounts/shop", authorization: Self.bearer)
        #expect(delete.status == 200)
        #expect(shared.records["shop"]?.isDeleted == true)
        #expect(first.fixture.registry.engine("shop") == nil && second.fixture.registry.engine("shop") == nil)
    }

    /// The file's `default` account is seeded into the shared store once; the second replica
    /// takes the seeded record instead of offering its own.
    @Test func fileAccountsAreSeededOnce() {
        let shared = InMemorySharedAccounts()
        let first = Replica(shared), second = Replica(shared)
        #expect(shared.records["default"]?.version == 1)
        #expect(first.replicator.held("default")?.version == 1 && second.replicator.held("default")?.version == 1)
    }

    /// Redis unreachable: 503 `ServiceUnavailable` with `Retry-After`, and nothing changes on
    /// any replica nor in any database.
    @Test func whileRedisIsDownAChangeIs503AndChangesNothing() {
        let shared = InMemorySharedAccounts()
        let first = Replica(shared), second = Replica(shared)
        let saves = first.fixture.accountStore.calls.count
        shared.setDown(true)
        let refused = first.put("shop")
        #expect(refused.status == 503)
        #expect(refused.errorCode == "ServiceUnavailable")
        #expect(refused.header("Retry-After") != nil)
        #expect(first.fixture.send("DELETE", "/v1/accounts/default", authorization: Self.bearer).status == 503)
        for replica in [first, second] {
            #expect(replica.fixture.registry.ids == ["default"])
        }
        #expect(first.fixture.accountStore.calls.count == saves)
        #expect(shared.records["shop"] == nil)
    }

    /// The connection broke with the write in flight: 503 saying the outcome is unknown (not
    /// "nothing was changed", which may be false), and an audit line that says so.
    @Test func aWriteWhoseConnectionBrokeIsAnsweredAsUnknown() {
        let shared = InMemorySharedAccounts()
        let first = Replica(shared)
        shared.setLosesWrites(true)
        let answer = first.put("shop")
        #expect(answer.status == 503)
        #expect(answer.errorCode == "ServiceUnavailable")
        #expect(answer.errorMessage?.contains("may or may not have been made") == true, "\(answer.text)")
        #expect(answer.errorMessage?.contains("nothing was changed") == false)
    }

    /// Redis restarted empty: reconnecting replicas write back what they hold, and a change
    /// afterwards gets a version above every one held (the counter was lost with the data).
    @Test func anEmptyRedisIsRepopulatedAndLaterChangesStillWin() {
        let shared = InMemorySharedAccounts()
        let first = Replica(shared), second = Replica(shared)
        #expect(first.put("shop").status == 201)
        #expect(first.put("shop", Self.body.replacingOccurrences(of: "120", with: "90")).status == 200)
        let held = first.replicator.held("shop")!.version
        shared.loseData()
        first.replicator.connected()
        second.replicator.connected()
        #expect(shared.records["shop"]?.version == held)
        #expect(shared.records["default"] != nil)
        #expect(second.put("shop", Self.body.replacingOccurrences(of: "120", with: "60")).status == 200)
        #expect(shared.records["shop"]!.version > held)
        #expect(first.fixture.registry.engine("shop")?.config.maxCacheTTL == 60)
    }

    /// A cache delete (one host, then all) on one replica evicts on the other.
    @Test func aCacheDeleteOnOneReplicaEvictsOnTheOther() {
        let shared = InMemorySharedAccounts()
        let first = Replica(shared), second = Replica(shared)
        for replica in [first, second] {
            replica.fixture.seed([
                ("www.example.test", .a, replica.fixture.entry(["127.0.0.1"])),
                ("api.example.test", .a, replica.fixture.entry(["127.0.0.2"])),
            ])
        }
        #expect(first.fixture.send("DELETE", "/v1/default/cache", query: ["host": "www.example.test"]).status == 200)
        #expect(second.fixture.engine.cacheCount == 1)
        #expect(second.fixture.get("/v1/default/cache", ["host": "www.example.test"]).status == 404)
        #expect(second.fixture.get("/v1/default/cache", ["host": "api.example.test"]).status == 200)
        #expect(second.fixture.send("DELETE", "/v1/default/cache").status == 200)
        #expect(first.fixture.engine.cacheCount == 0)
    }

    /// A signed change is accepted once across replicas: the shared store is the replay memory.
    /// Sent again to the other replica it is refused (401) and changes nothing there; while the
    /// store is down a signed change is refused (503) and changes nothing.
    @Test func aSignedChangeIsAcceptedOnceAcrossReplicas() throws {
        let shared = InMemorySharedAccounts()
        let first = Replica(shared), second = Replica(shared)
        let secret = "manage-secret-0123456789"
        let keyed =
            Self.body.dropLast()
            + #","requireSignedRequests":true,"clientKeys":[{"id":"m1","secret":"\#(secret)","role":"manage"}]}"#
        #expect(first.put("shop", String(keyed)).status == 201)
        for replica in [first, second] {
            replica.fixture.seed([("www.example.test", .a, replica.fixture.entry(["127.0.0.1"]))], account: "shop")
        }
        func signedDelete(expiry: Double) throws -> HTTPRequest {
            let t = String(Int(expiry))
            let canonical = try SignatureV1.canonicalString(
                method: "DELETE", path: "/v1/shop/cache", arguments: [("host", "www.example.test")], expiry: t, body: [])
            let sign = try SignatureV1.signature(secret: secret, canonical: canonical)
            let query = ["host": "www.example.test", "kid": "m1", "t": t, "sign": sign]
            return HTTPRequest(method: "DELETE", path: "/v1/shop/cache", query: query)
        }
        let delete = try signedDelete(expiry: first.fixture.clock.now() + 60)
        #expect(Exchange(first.fixture.handle(delete)).awaited().status == 200)
        second.fixture.seed([("www.example.test", .a, second.fixture.entry(["127.0.0.1"]))], account: "shop")
        let replayed = Exchange(second.fixture.handle(delete)).awaited()
        #expect(replayed.status == 401)
        #expect(replayed.errorMessage?.contains("replayed signature") == true)
        #expect(second.fixture.registry.engine("shop")?.cacheCount == 1, "the replay evicted")

        shared.setDown(true)
        first.fixture.seed([("www.example.test", .a, first.fixture.entry(["127.0.0.1"]))], account: "shop")
        let refused = Exchange(first.fixture.handle(try signedDelete(expiry: first.fixture.clock.now() + 61))).awaited()
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") != nil)
        #expect(first.fixture.registry.engine("shop")?.cacheCount == 1, "a change whose replay check failed was made")
    }
}
