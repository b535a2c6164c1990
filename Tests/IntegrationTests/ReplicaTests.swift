import Foundation
import HTTPDNSTestSupport
import Testing

/// Replicas sharing their accounts and cache changes through a real Redis, three
/// real httpdnsd processes behind haproxy. Convergence is polled with generous deadlines
/// (a loaded machine): these tests assert that the replicas agree, not how fast.
@Suite("Replicas sharing Redis", .serialized)
struct ReplicaTests {
    /// An account created through one replica answers on the other two, and through haproxy
    /// whichever replica takes the request; its deletion reaches them all the same way.
    @Test func anAccountPutOnOneReplicaAnswersOnTheOthers() async throws {
        try await withReplicaCluster { cluster in
            let secret = String(repeating: "5e", count: 32)
            let body = cluster.account(["maxCacheTTL": 600, "aesSecretKey": .string(secret)])
            try LoopbackGuard.checkAccount(id: "shop", body)
            let put = try await cluster.replicas[0].client.put("/v1/accounts/shop", json: body, headers: cluster.admin)
            #expect(put.status == 201, "\(put)")
            for replica in cluster.replicas.dropFirst() {
                let answered = try await poll(for: 20) { () -> Bool? in
                    let response = try await replica.client.get("/v1/shop/resolve?host=\(TestZone.www)")
                    return response.status == 200 ? true : nil
                }
                #expect(answered == true, "replica on \(replica.port) never served account shop")
                let config = try await replica.client.get("/v1/accounts/shop", headers: cluster.admin)
                #expect(config.json["config"]?["maxCacheTTL"]?.int == 600)
            }
            // The secret replicates (it is in the shared record) and is logged nowhere.
            #expect(try cluster.redis.cli(["HGET", "it:accounts", "shop"]).contains(secret))
            for replica in cluster.replicas { #expect(!replica.log().contains(secret)) }
            var servedBy = Set<String>()
            for _ in 0..<6 {
                let response = try await cluster.haproxy.client.get("/v1/shop/resolve?host=\(TestZone.www)")
                #expect(response.status == 200, "\(response)")
                if let name = response.header("X-Served-By") { servedBy.insert(name) }
            }
            #expect(servedBy == ["r1", "r2", "r3"])

            let delete = try await cluster.replicas[1].client.delete("/v1/accounts/shop", headers: cluster.admin)
            #expect(delete.status == 200, "\(delete)")
            for replica in cluster.replicas {
                let gone = try await poll(for: 20) { () -> Bool? in
                    let response = try await replica.client.get("/v1/shop/resolve?host=\(TestZone.www)")
                    return response.status == 404 ? true : nil
                }
                #expect(gone == true, "replica on \(replica.port) still serves account shop")
            }
        }
    }

    /// `DELETE /v1/{acct}/cache?host=` through one replica evicts the host on every replica,
    /// and a flush of the whole cache does too.
    @Test func aCacheDeleteThroughOneReplicaEvictsOnAll() async throws {
        try await withReplicaCluster { cluster in
            let hosts = [TestZone.www, TestZone.v4Only]
            for replica in cluster.replicas {
                for host in hosts {
                    let response = try await replica.client.get("/v1/default/resolve?host=\(host)")
                    #expect(response.status == 200, "\(response)")
                }
            }
            func cached(_ replica: HTTPDNSDProcess, _ host: String) async throws -> Bool {
                try await replica.client.get("/v1/default/cache?host=\(host)&type=A").status == 200
            }
            for replica in cluster.replicas {
                for host in hosts { #expect(try await cached(replica, host)) }
            }
            // Shared answers (the second tier in Redis) of the host and of the account go too.
            for key in [
                "it:answer:default:A:\(TestZone.www)", "it:answer:default:AAAA:\(TestZone.www):192.0.2.0/24",
                "it:answer:default:A:\(TestZone.v4Only)", "it:answer:other:A:\(TestZone.www)",
            ] {
                try cluster.redis.cli(["SET", key, "x"])
            }
            let delete = try await cluster.replicas[2].client.delete("/v1/default/cache?host=\(TestZone.www)")
            #expect(delete.status == 200, "\(delete)")
            for replica in cluster.replicas {
                let evicted = try await poll(for: 20) { try await cached(replica, TestZone.www) ? nil : true }
                #expect(evicted == true, "replica on \(replica.port) still holds \(TestZone.www)")
                #expect(try await cached(replica, TestZone.v4Only), "only the host asked for is evicted")
            }
            #expect(
                try cluster.redis.cli([
                    "EXISTS", "it:answer:default:A:\(TestZone.www)", "it:answer:default:AAAA:\(TestZone.www):192.0.2.0/24",
                ]) == "0")
            #expect(try cluster.redis.cli(["EXISTS", "it:answer:default:A:\(TestZone.v4Only)"]) == "1")
            let flush = try await cluster.replicas[0].client.delete("/v1/default/cache")
            #expect(flush.status == 200, "\(flush)")
            for replica in cluster.replicas {
                let evicted = try await poll(for: 20) { try await cached(replica, TestZone.v4Only) ? nil : true }
                #expect(evicted == true, "replica on \(replica.port) still holds \(TestZone.v4Only)")
            }
            #expect(try cluster.redis.cli(["EXISTS", "it:answer:default:A:\(TestZone.v4Only)"]) == "0")
            #expect(try cluster.redis.cli(["EXISTS", "it:answer:other:A:\(TestZone.www)"]) == "1", "another account's answers stay")
        }
    }

    /// A preload through one replica fills the cache of every replica (a cache lookup is
    /// local: without the published preload the others would not hold the host).
    @Test func aPreloadThroughOneReplicaFillsEveryCache() async throws {
        try await withReplicaCluster { cluster in
            for replica in cluster.replicas {
                #expect(try await replica.client.get("/v1/default/cache?host=\(TestZone.v4Only)&type=A").status == 404)
            }
            let preload = try await cluster.replicas[1].client.post(
                "/v1/default/preload", json: ["hosts": [.string(TestZone.v4Only)], "type": "A"])
            #expect(preload.status == 200, "\(preload)")
            for replica in cluster.replicas {
                let held = try await poll(for: 20) { () -> Bool? in
                    try await replica.client.get("/v1/default/cache?host=\(TestZone.v4Only)&type=A").status == 200 ? true : nil
                }
                #expect(held == true, "replica on \(replica.port) did not preload \(TestZone.v4Only)")
            }
        }
    }

    /// Redis restarted empty: the replicas write their accounts back into it, and a change made
    /// afterwards through any replica reaches all (the version counter survived the loss).
    @Test func anEmptyRedisIsRepopulatedAndReplicasConverge() async throws {
        try await withReplicaCluster { cluster in
            let put = try await cluster.replicas[0].client.put(
                "/v1/accounts/shop", json: cluster.account(["maxCacheTTL": 600]), headers: cluster.admin)
            #expect(put.status == 201, "\(put)")
            try await expectEverywhere(cluster, "shop", maxCacheTTL: 600)

            try await cluster.redis.restart()
            let repopulated = try await poll(for: 30, every: .milliseconds(200)) { () -> Bool? in
                let reply = (try? cluster.redis.cli(["HGET", "it:accounts", "shop"])) ?? ""
                return reply.contains("\"id\":\"shop\"") ? true : nil
            }
            #expect(repopulated == true, "no replica wrote account shop back into Redis")

            // Changes are accepted again once a replica is reconnected (503 until then).
            let change = try await poll(for: 30, every: .milliseconds(200)) { () -> HTTPClientResponse? in
                let response = try await cluster.replicas[2].client.put(
                    "/v1/accounts/shop", json: cluster.account(["maxCacheTTL": 120]), headers: cluster.admin)
                return response.status == 503 ? nil : response
            }
            #expect(change?.status == 200, "\(String(describing: change))")
            try await expectEverywhere(cluster, "shop", maxCacheTTL: 120)
        }
    }

    /// A replica restarted while Redis is down comes back with its accounts (from its own
    /// SQLite) and its cache, and refuses admin changes with 503 until Redis is back.
    @Test func aReplicaRestartedWhileRedisIsDownKeepsItsAccountsAndCache() async throws {
        try await withReplicaCluster { cluster in
            let put = try await cluster.replicas[0].client.put("/v1/accounts/shop", json: cluster.account(), headers: cluster.admin)
            #expect(put.status == 201, "\(put)")
            try await expectEverywhere(cluster, "shop", maxCacheTTL: 3600)
            let third = cluster.replicas[2]
            let first = try await third.client.get("/v1/shop/resolve?host=\(TestZone.www)")
            #expect(first.status == 200, "\(first)")

            await cluster.redis.kill()
            #expect(await third.stop() == 0)
            let restarted = try await HTTPDNSDProcess.start(
                ReplicaCluster.options(cluster.servers, redis: cluster.redis, databasePath: third.databasePath))
            do {
                let answer = try await restarted.client.get("/v1/shop/resolve?host=\(TestZone.www)")
                #expect(answer.status == 200, "\(answer)")
                #expect(answer.json["source"]?.string == "cache", "\(answer)")
                #expect(Set(answer.json["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
                let refused = try await restarted.client.put("/v1/accounts/other", json: cluster.account(), headers: cluster.admin)
                expectError(refused, status: 503, code: "ServiceUnavailable")
                #expect(refused.header("Retry-After") != nil)
                let absent = try await restarted.client.get("/v1/accounts/other", headers: cluster.admin)
                #expect(absent.status == 404, "a refused change changes nothing: \(absent)")
            } catch {
                Issue.record("restarted replica log:\n\(restarted.log().suffix(3000))")
                await restarted.stop()
                throw error
            }
            await restarted.stop()
        }
    }

    /// A paused Redis (SIGSTOP: its connections stay open, nothing is answered) is noticed by
    /// every replica's subscriber, which sends nothing else and so has no reply to miss: its
    /// health PING goes unanswered, the connection is dropped (`httpdns_redis_up` 0, a log line
    /// naming the PING). After the pause it is re-established and resubscribed, and an account
    /// change and a cache delete published afterwards through one replica reach the others.
    @Test func aPausedRedisIsNoticedByTheSubscribersWhichResubscribeAfterIt() async throws {
        try await withReplicaCluster { cluster in
            for replica in cluster.replicas {
                #expect(try await replica.client.get("/v1/default/resolve?host=\(TestZone.www)").status == 200)
            }
            try await waitUntilSubscribed(cluster)
            cluster.redis.pause()
            for replica in cluster.replicas {
                let down = try await poll(for: 60, every: .milliseconds(100)) { () -> Bool? in
                    try await replica.metrics().sum("httpdns_redis_up", ["purpose": "replication"]) == 0 ? true : nil
                }
                #expect(down == true, "replica on \(replica.port) never noticed the paused Redis")
            }
            cluster.redis.resume()
            try await waitUntilSubscribed(cluster)
            for replica in cluster.replicas {
                let log = replica.log()
                #expect(
                    log.contains("redis (replication): lost the connection to redis://127.0.0.1:\(cluster.redis.port): no reply to PING"),
                    "replica on \(replica.port)")
                #expect(
                    log.components(separatedBy: "redis (replication): connected to").count - 1 >= 2,
                    "replica on \(replica.port) did not reconnect")
            }

            let put = try await poll(for: 30, every: .milliseconds(200)) { () -> HTTPClientResponse? in
                let response = try await cluster.replicas[0].client.put(
                    "/v1/accounts/shop", json: cluster.account(["maxCacheTTL": 600]), headers: cluster.admin)
                return response.status == 503 ? nil : response
            }
            #expect(put?.status == 201, "\(String(describing: put))")
            try await expectEverywhere(cluster, "shop", maxCacheTTL: 600)
            let delete = try await cluster.replicas[0].client.delete("/v1/default/cache?host=\(TestZone.www)")
            #expect(delete.status == 200, "\(delete)")
            for replica in cluster.replicas {
                let evicted = try await poll(for: 20) { () -> Bool? in
                    try await replica.client.get("/v1/default/cache?host=\(TestZone.www)&type=A").status == 404 ? true : nil
                }
                #expect(evicted == true, "replica on \(replica.port) still holds \(TestZone.www)")
            }
        }
    }

    /// Waits until every replica's Redis connections are up and Redis counts all three
    /// subscribers on the invalidation channel (`up` comes just before the SUBSCRIBE is read).
    func waitUntilSubscribed(_ cluster: ReplicaCluster) async throws {
        for replica in cluster.replicas {
            let up = try await poll(for: 60, every: .milliseconds(100)) { () -> Bool? in
                let metrics = try await replica.metrics()
                return ["replication", "accounts", "answers"].allSatisfy { metrics.sum("httpdns_redis_up", ["purpose": $0]) == 1 }
                    ? true : nil
            }
            guard up == true else { throw HarnessError("replica on \(replica.port): Redis connections not up") }
        }
        let subscribed = try await poll(for: 60, every: .milliseconds(100)) { () -> Bool? in
            (try? cluster.redis.cli(["PUBSUB", "NUMSUB", "it:channel:invalidate"]))?.hasSuffix("\n3") == true ? true : nil
        }
        guard subscribed == true else {
            throw HarnessError(
                "Redis does not count three subscribers: \(try cluster.redis.cli(["PUBSUB", "NUMSUB", "it:channel:invalidate"]))")
        }
    }

    /// Polls every replica until it holds `id` with `maxCacheTTL`.
    func expectEverywhere(_ cluster: ReplicaCluster, _ id: String, maxCacheTTL: Int, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        for replica in cluster.replicas {
            let held = try await poll(for: 20) { () -> Bool? in
                let response = try await replica.client.get("/v1/accounts/\(id)", headers: cluster.admin)
                return response.json["config"]?["maxCacheTTL"]?.int == maxCacheTTL ? true : nil
            }
            #expect(
                held == true, "replica on \(replica.port) never held \(id) with maxCacheTTL \(maxCacheTTL)", sourceLocation: sourceLocation)
        }
    }
}
