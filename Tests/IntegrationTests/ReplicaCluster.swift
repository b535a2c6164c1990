import Foundation
import HTTPDNSTestSupport
import Testing

/// Three real httpdnsd replicas sharing one real `redis-server` on loopback, with haproxy in
/// front (round robin), over the loopback DNS stack. Every account a test creates names the
/// stack's loopback upstreams.
final class ReplicaCluster: Sendable {
    static let token = "replica-admin-token-0123456789"

    let servers: TestServers
    let redis: RedisServerProcess
    let replicas: [HTTPDNSDProcess]
    let haproxy: HaproxyProcess

    private init(servers: TestServers, redis: RedisServerProcess, replicas: [HTTPDNSDProcess], haproxy: HaproxyProcess) {
        self.servers = servers
        self.redis = redis
        self.replicas = replicas
        self.haproxy = haproxy
    }

    /// The options of replica `index` (its own database unless `databasePath` is given).
    static func options(_ servers: TestServers, redis: RedisServerProcess, databasePath: String? = nil) -> HTTPDNSDOptions {
        var options = servers.options()
        options.adminToken = token
        options.databasePath = databasePath
        options.environment["HTTPDNS_REDIS"] = redis.url
        options.environment["HTTPDNS_REDIS_PREFIX"] = "it:"
        // A loaded 2-core machine: the shared answer tier may wait longer than the default.
        options.environment["HTTPDNS_REDIS_TIMEOUT"] = "500"
        return options
    }

    static func start(_ servers: TestServers) async throws -> ReplicaCluster {
        let redis = try await RedisServerProcess.start()
        var replicas: [HTTPDNSDProcess] = []
        do {
            for _ in 0..<3 {
                replicas.append(try await HTTPDNSDProcess.start(options(servers, redis: redis)))
            }
            let haproxy = try await HaproxyProcess.start(backends: replicas.map(\.port))
            return ReplicaCluster(servers: servers, redis: redis, replicas: replicas, haproxy: haproxy)
        } catch {
            for replica in replicas { await replica.stop() }
            await redis.stop()
            throw error
        }
    }

    func stop() async {
        await haproxy.stop()
        for replica in replicas { await replica.stop() }
        await redis.stop()
    }

    /// The admin header.
    var admin: [String: String] { ["Authorization": "Bearer \(Self.token)"] }

    /// An account body with the stack's loopback upstreams.
    func account(_ extra: [String: TestJSON] = [:]) -> TestJSON {
        var object: [String: TestJSON] = [
            "upstreams": [.string(servers.dnss.upstreamSpec)],
            "localDNSServers": [.string(servers.unbound.address)],
        ]
        object.merge(extra) { _, new in new }
        let json = TestJSON.object(object)
        return json
    }
}

/// Runs `body` with a fresh cluster, stopping it on every path; on failure the replicas' logs
/// are attached to the issue.
func withReplicaCluster(_ body: (ReplicaCluster) async throws -> Void) async throws {
    try await withTestServers { servers in
        let cluster = try await ReplicaCluster.start(servers)
        do {
            try await body(cluster)
            await cluster.stop()
        } catch {
            for (index, replica) in cluster.replicas.enumerated() {
                Issue.record("replica r\(index + 1) log:\n\(replica.log().suffix(3000))")
            }
            await cluster.stop()
            throw error
        }
    }
}
