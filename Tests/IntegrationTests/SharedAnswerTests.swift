import Foundation
import HTTPDNSTestSupport
import Testing

/// The shared answer tier with the real binary: replicas sharing one real redis-server,
/// dnss + unbound behind them.
@Suite(.serialized) struct SharedAnswerTests {
    /// Starts `count` replicas of httpdnsd on `redis` (the same loopback upstreams), runs `body`,
    /// stops them on every path.
    func withReplicas(
        _ count: Int, _ servers: TestServers, redis: RedisServerProcess, extra: [String] = [],
        _ body: ([HTTPDNSDProcess]) async throws -> Void
    ) async throws {
        var replicas: [HTTPDNSDProcess] = []
        do {
            for _ in 0..<count {
                var options = servers.options()
                options.arguments += ["--redis", redis.url] + extra
                replicas.append(try await HTTPDNSDProcess.start(options))
            }
            try await body(replicas)
        } catch {
            for (index, replica) in replicas.enumerated() { Issue.record("replica \(index + 1) log:\n\(replica.log().suffix(3000))") }
            for replica in replicas { await replica.stop() }
            throw error
        }
        for replica in replicas { await replica.stop() }
    }

    /// Upstream queries a replica has made (any upstream, any outcome).
    func upstreamQueries(_ replica: HTTPDNSDProcess) async throws -> Double {
        try await replica.metrics().sum("httpdns_upstream_requests_total")
    }

    /// Waits until `condition` holds of each replica's `/metrics` (`Poll.until`: `seconds` and
    /// its minimum of looks); throws `what` when it does not.
    func waitForMetrics(
        _ replicas: [HTTPDNSDProcess], _ what: String, seconds: Double = 20, _ condition: (PrometheusText) -> Bool
    ) async throws {
        for replica in replicas {
            guard try await Poll.until(limit: seconds, { condition(try await replica.metrics()) }) else { throw HarnessError(what) }
        }
    }

    func waitUntilRedisUp(_ replicas: [HTTPDNSDProcess], _ up: Bool, seconds: Double = 20) async throws {
        try await waitForMetrics(replicas, "httpdns_redis_up did not become \(up ? 1 : 0)", seconds: seconds) {
            $0.sum("httpdns_redis_up", ["purpose": "answers"]) == (up ? 1 : 0)
        }
    }

    /// Waits until every HTTP thread of each replica has its own `answers` connection up
    /// (`httpdns_redis_thread_connections`).
    func waitUntilThreadConnectionsUp(_ replicas: [HTTPDNSDProcess]) async throws {
        try await waitForMetrics(replicas, "the HTTP threads' Redis connections did not come up") {
            $0.sum("httpdns_redis_thread_connections", ["purpose": "answers", "state": "up"]) >= 1
                && $0.sum("httpdns_redis_thread_connections", ["purpose": "answers", "state": "down"]) == 0
        }
    }

    /// Waits until `text` is in the replica's log (lines reach it through the log's own thread).
    func waitForLog(_ replica: HTTPDNSDProcess, _ text: String) async throws {
        guard await Poll.until(limit: 10, { replica.log().contains(text) }) else { throw HarnessError("no log line with '\(text)'") }
    }

    /// A name resolved through replica 1 is answered `shared` by replicas 2 and 3,
    /// with unbound's query count unchanged.
    @Test func aNameResolvedThroughOneReplicaIsSharedOnTheOthersWithoutAnUpstreamQuery() async throws {
        try await withTestServers { servers in
            let redis = try await RedisServerProcess.start(password: "redis-secret-9")
            defer { Task { await redis.stop() } }
            // A generous timeout: on a loaded machine a 50 ms one could turn a shared hit into a miss.
            try await withReplicas(3, servers, redis: redis, extra: ["--redis-timeout", "2000"]) { replicas in
                for replica in replicas { _ = try await replica.client.get("/v1/default/resolve?host=\(TestZone.unique("warm"))&type=A") }
                try await waitUntilRedisUp(replicas, true)
                try await waitUntilThreadConnectionsUp(replicas)
                let name = TestZone.unique("shared")
                let first = try await replicas[0].client.get("/v1/default/resolve?host=\(name)&type=A")
                #expect(first.json["source"]?.string == "upstream", "\(first)")
                let unbound = try await servers.unbound.queryCount()
                for (index, replica) in replicas.enumerated().dropFirst() {
                    let upstream = try await upstreamQueries(replica)
                    let shared = try await replica.client.get("/v1/default/resolve?host=\(name)&type=A")
                    #expect(shared.status == 200)
                    #expect(shared.json["source"]?.string == "shared", "replica \(index + 1): \(shared)")
                    #expect(shared.json["ips"]?.strings == first.json["ips"]?.strings)
                    #expect(try await upstreamQueries(replica) == upstream, "replica \(index + 1) asked its upstreams")
                    // Cached on this replica now: an ordinary hit.
                    let again = try await replica.client.get("/v1/default/resolve?host=\(name)&type=A")
                    #expect(again.json["source"]?.string == "cache", "replica \(index + 1): \(again)")
                    let metrics = try await replica.metrics()
                    #expect(metrics.sum("httpdns_redis_shared_answers_total", ["result": "hit"]) >= 1)
                }
                #expect(try await servers.unbound.queryCount() == unbound)
                // The Redis families pass promtool's lint, and name no password.
                let scrape = try await replicas[1].client.get("/metrics")
                #expect(!scrape.text.contains("redis-secret-9"))
                let file = try TestPaths.makeTemporaryDirectory("redis-metrics").appendingPathComponent("scrape.txt")
                try Data(scrape.text.utf8).write(to: file)
                let lint = try CommandRun.run(
                    "/bin/sh", ["-c", "\"$0\" check metrics < \"$1\"", try TestPaths.executable("promtool"), file.path])
                #expect(lint.status == 0 && !lint.text.contains("redis"), "promtool: \(lint.text)")
                for replica in replicas { #expect(!replica.log().contains("redis-secret-9"), "the Redis password reached the log") }
            }
        }
    }

    /// A negative answer one replica resolved reaches the other through Redis with its zone
    /// SOA (a version-2 value), and that replica's RFC 8484 answer carries it.
    @Test func aSharedNegativeAnswerKeepsItsSOA() async throws {
        try await withTestServers { servers in
            let redis = try await RedisServerProcess.start()
            defer { Task { await redis.stop() } }
            try await withReplicas(2, servers, redis: redis, extra: ["--redis-timeout", "2000"]) { replicas in
                for replica in replicas { _ = try await replica.client.get("/v1/default/resolve?host=\(TestZone.unique("warm"))&type=A") }
                try await waitUntilRedisUp(replicas, true)
                let name = TestZone.nxdomain("shared")
                let first = try await DoHTestClient(url: "http://127.0.0.1:\(replicas[0].port)/dns-query").query(name, post: true)
                #expect(first.authority.count == 1, "\(first)")
                let secondUpstream = try await upstreamQueries(replicas[1])
                let second = try await DoHTestClient(url: "http://127.0.0.1:\(replicas[1].port)/dns-query").query(name, post: true)
                #expect(try await upstreamQueries(replicas[1]) == secondUpstream, "the second replica asked its upstream")
                #expect(second.rcode == "NXDOMAIN", "\(second)")
                #expect(second.authority.map(\.name) == ["\(TestZone.origin)."], "\(second)")
                #expect(second.authority.first?.data == first.authority.first?.data)
                #expect((second.authority.first?.ttl ?? 99) <= 30, "\(second)")
            }
        }
    }

    /// 3 × 50 concurrent misses for one new name across the replicas cost 1 upstream
    /// query (each replica's single-flight joins its 50; the Redis lock makes the three one).
    @Test func concurrentMissesAcrossReplicasCostOneUpstreamQuery() async throws {
        try await withTestServers { servers in
            let redis = try await RedisServerProcess.start()
            defer { Task { await redis.stop() } }
            // A generous timeout: the lock is what is tested, not a 50 ms deadline under load.
            try await withReplicas(3, servers, redis: redis, extra: ["--redis-timeout", "2000"]) { replicas in
                for replica in replicas { _ = try await replica.client.get("/v1/default/resolve?host=\(TestZone.unique("warm"))&type=A") }
                try await waitUntilRedisUp(replicas, true)
                let name = TestZone.unique("herd")
                var before = 0.0
                for replica in replicas { before += try await upstreamQueries(replica) }
                let unbound = try await servers.unbound.queryCount()
                let perReplica = 50
                let answers = try await withThrowingTaskGroup(of: (Int, HTTPClientResponse).self) { group in
                    for index in 0..<(perReplica * replicas.count) {
                        let replica = index % replicas.count
                        let client = replicas[replica].client
                        group.addTask { (replica, try await client.get("/v1/default/resolve?host=\(name)&type=A")) }
                    }
                    return try await group.reduce(into: [(Int, HTTPClientResponse)]()) { $0.append($1) }
                }
                #expect(answers.count == perReplica * replicas.count)
                for replica in replicas.indices {
                    let mine = answers.filter { $0.0 == replica }.map(\.1)
                    #expect(
                        mine.count == perReplica && mine.allSatisfy { $0.status == 200 }, "replica \(replica + 1): \(mine.map(\.status))")
                }
                var after = 0.0
                for replica in replicas { after += try await upstreamQueries(replica) }
                #expect(after - before == 1, "upstream queries across the replicas")
                #expect(try await servers.unbound.queryCount() - unbound == 1)
            }
        }
    }

    @Test func withRedisPausedOrKilledHitsAndMissesAreStillAnswered() async throws {
        try await withTestServers { servers in
            let redis = try await RedisServerProcess.start()
            defer { Task { await redis.stop() } }
            try await withReplicas(1, servers, redis: redis) { replicas in
                let replica = replicas[0]
                let cached = TestZone.unique("kept")
                _ = try await replica.client.get("/v1/default/resolve?host=\(cached)&type=A")
                try await waitUntilRedisUp(replicas, true)
                // Paused: Redis accepts and never answers. Every request still gets its answer, and
                // long before the pause ends (the test keeps it for its whole length).
                redis.pause()
                let started = Date()
                let hit = try await replica.client.get("/v1/default/resolve?host=\(cached)&type=A")
                #expect(hit.status == 200 && hit.json["source"]?.string == "cache", "\(hit)")
                for index in 0..<5 {
                    let miss = try await replica.client.get("/v1/default/resolve?host=\(TestZone.unique("paused\(index)"))&type=A")
                    #expect(miss.status == 200 && miss.json["source"]?.string == "upstream", "\(miss)")
                }
                #expect(Date().timeIntervalSince(started) < 30)
                let ready = try await replica.client.get("/readyz")
                #expect(ready.status == 200)
                let metrics = try await replica.metrics()
                #expect(metrics.sum("httpdns_redis_command_errors_total", ["purpose": "answers", "reason": "timeout"]) >= 1)
                // Killed: the connection is reported down, and misses go straight to the upstreams.
                await redis.kill()
                try await waitUntilRedisUp(replicas, false)
                try await waitForLog(replica, "redis (answers): lost the connection to redis://127.0.0.1:\(redis.port)")
                let miss = try await replica.client.get("/v1/default/resolve?host=\(TestZone.unique("down"))&type=A")
                #expect(miss.status == 200 && miss.json["source"]?.string == "upstream", "\(miss)")
                #expect(try await replica.client.get("/readyz").status == 200)
                // Back, empty: the replica reconnects and shares again.
                try await redis.restart()
                try await waitUntilRedisUp(replicas, true)
                let name = TestZone.unique("back")
                _ = try await replica.client.get("/v1/default/resolve?host=\(name)&type=A")
                let stored = try await Poll.until(limit: 10) { try redis.cli(["EXISTS", "httpdnsd:answer:default:A:\(name)"]) == "1" }
                guard stored else { throw HarnessError("the answer never reached the restarted Redis") }
            }
        }
    }

    @Test func aReplicaStartsAndServesWithItsRedisUnreachable() async throws {
        try await withTestServers { servers in
            var options = servers.options()
            // A loopback port nothing listens on.
            options.arguments += ["--redis", "redis://127.0.0.1:\(freePort())"]
            try await withHTTPDNSD(options) { replica in
                #expect(try await replica.client.get("/readyz").status == 200)
                let miss = try await replica.client.get("/v1/default/resolve?host=\(TestZone.unique("nored"))&type=A")
                #expect(miss.status == 200 && miss.json["source"]?.string == "upstream", "\(miss)")
                let metrics = try await replica.metrics()
                #expect(metrics.sum("httpdns_redis_up", ["purpose": "answers"]) == 0)
                // Each HTTP thread has a connection of its own (the URL's host is an address), down.
                #expect(metrics.sum("httpdns_redis_thread_connections", ["purpose": "answers", "state": "up"]) == 0)
                #expect(metrics.sum("httpdns_redis_thread_connections", ["purpose": "answers", "state": "down"]) >= 1)
                try await waitForLog(replica, "redis (answers): cannot connect to redis://127.0.0.1:")
            }
        }
    }
}
