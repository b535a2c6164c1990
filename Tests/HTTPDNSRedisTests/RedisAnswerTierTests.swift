import Foundation
import HTTPDNSCore
import HTTPDNSTestSupport
import Synchronization
import Testing

@testable import HTTPDNSRedis

/// The tier's lock and wait against a real redis-server: two tiers are two replicas.
@Suite(.serialized) struct RedisAnswerTierTests {
    let key = CacheKey(host: HostName("www.example.com")!, family: .a)

    static func tier(_ server: RedisServerProcess, timeout: Int = 2000) throws -> (RedisClient, RedisAnswerTier) {
        let client = RedisClient(url: try RedisURL(parsing: server.url, key: "redis"), prefix: "t:", timeoutMilliseconds: timeout)
        // Waits and locks far longer than any stall of a loaded machine: the tests order events
        // themselves, and a lock that expired under them would change what they test.
        return (client, RedisAnswerTier(client: client, maximumWait: 60))
    }

    static func lookup(_ tier: RedisAnswerTier, _ key: CacheKey, wait: Int = 30_000) async -> SharedLookupResult {
        await withCheckedContinuation { continuation in
            tier.lookup(account: "shop", key: key, waitMilliseconds: wait) { continuation.resume(returning: $0) }
        }
    }

    static func waitUp(_ client: RedisClient) async throws {
        try await RedisConnectionTests.waitUntil(true, client.connection("answers"))
    }

    /// Waits until a replica is polling for another's answer: redis-server has run an `MGET`
    /// (only the poll sends one), so the lookup is past its first look, whenever its task ran.
    static func waitUntilPolling(_ server: RedisServerProcess) async throws {
        let polling = await Poll.until(limit: 30, every: .milliseconds(10)) {
            ((try? server.cli(["INFO", "commandstats"])) ?? "").contains("cmdstat_mget:calls=")
        }
        guard polling else { throw HarnessError("no replica polled within 30 s") }
    }

    /// Two replicas' tiers on one real redis-server, both connected, for `body`; shut down after.
    static func withTwoReplicas(
        _ body: (RedisServerProcess, RedisAnswerTier, RedisAnswerTier, _ clientB: RedisClient) async throws -> Void
    ) async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let (clientA, a) = try Self.tier(server)
        let (clientB, b) = try Self.tier(server)
        defer { clientA.shutdown(); clientB.shutdown() }
        try await Self.waitUp(clientA)
        try await Self.waitUp(clientB)
        try await body(server, a, b, clientB)
    }

    @Test func theFirstReplicaTakesTheLockAndTheSecondGetsItsAnswer() async throws {
        try await Self.withTwoReplicas { server, a, b, clientB in
            #expect(await Self.lookup(a, key) == .miss(holdsLock: true))
            let entry = CacheEntry(addresses: ["192.0.2.1"], originTTL: 300, storedAt: SystemClock().now())
            async let waited = Self.lookup(b, key)
            try await Self.waitUntilPolling(server)
            a.store(account: "shop", key: key, entry: entry, keepSeconds: 400, holdsLock: true)
            let result = await waited
            guard case .found(let found) = result else {
                Issue.record("expected the holder's answer, got \(result)")
                return
            }
            #expect(found.addresses == ["192.0.2.1"] && found.originTTL == 300)
            #expect(clientB.metrics.answerResults["hit_after_wait"] == 1, "\(clientB.metrics.answerResults)")
            // Kept for the TTL plus the stale window; the lock is gone.
            let ttl = Int(try server.cli(["PTTL", "t:answer:shop:A:www.example.com"])) ?? 0
            #expect(ttl > 300_000 && ttl <= 400_000)
            #expect(try server.cli(["EXISTS", "t:answer:shop:A:www.example.com:lock"]) == "0")
        }
    }

    @Test func aWaiterTakesTheLockOverWhenItsHolderLetsGoWithoutAnAnswer() async throws {
        try await Self.withTwoReplicas { server, a, b, _ in
            #expect(await Self.lookup(a, key) == .miss(holdsLock: true))
            async let waited = Self.lookup(b, key)
            try await Self.waitUntilPolling(server)
            a.release(account: "shop", key: key)
            #expect(await waited == .miss(holdsLock: true))
            #expect(try server.cli(["GET", "t:answer:shop:A:www.example.com:lock"]) == b.replicaID)
        }
    }

    @Test func aWaiterGoesOnByItselfWhenTheHolderIsSlow() async throws {
        try await Self.withTwoReplicas { _, a, b, clientB in
            #expect(await Self.lookup(a, key) == .miss(holdsLock: true))
            #expect(await Self.lookup(b, key, wait: 100) == .miss(holdsLock: false))
            #expect(clientB.metrics.answerResults["wait_timeout"] == 1)
        }
    }

    @Test func withRedisGoneALookupIsAMissWithoutTheLock() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let (client, tier) = try Self.tier(server)
        defer { client.shutdown() }
        try await Self.waitUp(client)
        await server.kill()
        #expect(await Self.lookup(tier, key) == .miss(holdsLock: false))
    }
}
