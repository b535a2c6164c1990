import Foundation
import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSRedis

/// What the tier sends to a real redis-server for a miss, and the lock its write-back leaves.
@Suite(.serialized) struct RedisAnswerTierCommandTests {
    let answerKey = "t:answer:shop:A:www.example.com"
    let entry = CacheEntry(addresses: ["192.0.2.1"], originTTL: 300, storedAt: SystemClock().now())

    static func key(_ host: String) -> CacheKey { CacheKey(host: HostName(host)!, family: .a) }

    /// Waits until `condition` holds (a store is not waited for by its caller).
    static func eventually(_ what: String, _ condition: () throws -> Bool) async throws {
        try await RedisConnectionTests.waitUntil(seconds: 10, what, condition)
    }

    /// `calls` of every command in `INFO commandstats` (`cmdstat_<name>:calls=N,...`).
    static func commandCalls(_ server: RedisServerProcess) throws -> [String: Int] {
        var calls: [String: Int] = [:]
        for line in try server.cli(["INFO", "commandstats"]).split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_") {
            let name = line.dropFirst("cmdstat_".count).prefix { $0 != ":" }
            let count = line.split(separator: "calls=").dropFirst().first?.prefix { $0.isNumber }
            calls[String(name)] = count.flatMap { Int($0) }
        }
        return calls
    }

    static func replies(_ client: RedisClient) -> UInt64 { client.metrics.snapshot["answers"]?.latency.count ?? 0 }

    @Test func aMissResolvedUpstreamSendsTwoScriptCallsBySHA() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let (client, tier) = try RedisAnswerTierTests.tier(server)
        defer { client.shutdown() }
        try await RedisAnswerTierTests.waitUp(client)
        // A first miss loads the scripts (each EVALSHA answered NOSCRIPT, then EVAL: four replies),
        // which is not the steady state.
        let warm = Self.key("warm.example.com")
        #expect(await RedisAnswerTierTests.lookup(tier, warm) == .miss(holdsLock: true))
        tier.store(account: "shop", key: warm, entry: entry, keepSeconds: 400, holdsLock: true)
        try await Self.eventually("the warm-up answer stored") { try server.cli(["EXISTS", "t:answer:shop:A:warm.example.com"]) == "1" }
        try await Self.eventually("the warm-up replies counted") { Self.replies(client) == 4 }

        try server.cli(["CONFIG", "RESETSTAT"])
        let before = Self.replies(client)
        let key = Self.key("www.example.com")
        #expect(await RedisAnswerTierTests.lookup(tier, key) == .miss(holdsLock: true))
        tier.store(account: "shop", key: key, entry: entry, keepSeconds: 400, holdsLock: true)
        try await Self.eventually("the answer stored") { try server.cli(["EXISTS", answerKey]) == "1" }
        try await Self.eventually("the store's reply counted") { Self.replies(client) == before + 2 }
        let calls = try Self.commandCalls(server)
        #expect(calls["evalsha"] == 2)
        #expect(calls["eval"] == nil)
        #expect(try server.cli(["EXISTS", answerKey + ":lock"]) == "0")
        try await Task.sleep(for: .milliseconds(100))
        #expect(Self.replies(client) == before + 2)
    }

    @Test func aStoreAfterRedisLostItsScriptsStillStoresAndReleases() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let (client, tier) = try RedisAnswerTierTests.tier(server)
        defer { client.shutdown() }
        try await RedisAnswerTierTests.waitUp(client)
        let key = Self.key("www.example.com")
        try server.cli(["SCRIPT", "FLUSH"])
        #expect(await RedisAnswerTierTests.lookup(tier, key) == .miss(holdsLock: true))
        #expect(try server.cli(["GET", answerKey + ":lock"]) == tier.replicaID)
        try server.cli(["SCRIPT", "FLUSH"])
        tier.store(account: "shop", key: key, entry: entry, keepSeconds: 400, holdsLock: true)
        try await Self.eventually("the answer stored") { try server.cli(["EXISTS", answerKey]) == "1" }
        #expect(try server.cli(["EXISTS", answerKey + ":lock"]) == "0")
        let ttl = Int(try server.cli(["PTTL", answerKey])) ?? 0
        #expect(ttl > 300_000 && ttl <= 400_000)
    }

    @Test func theWriteBackLeavesALockAnotherReplicaTookMeanwhile() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let (client, tier) = try RedisAnswerTierTests.tier(server)
        defer { client.shutdown() }
        try await RedisAnswerTierTests.waitUp(client)
        let key = Self.key("www.example.com")
        #expect(await RedisAnswerTierTests.lookup(tier, key) == .miss(holdsLock: true))
        // This replica's lock expired and another replica took it.
        try server.cli(["SET", answerKey + ":lock", "other-replica", "PX", "60000"])
        tier.store(account: "shop", key: key, entry: entry, keepSeconds: 400, holdsLock: true)
        try await Self.eventually("the answer stored") { try server.cli(["EXISTS", answerKey]) == "1" }
        #expect(try server.cli(["GET", answerKey + ":lock"]) == "other-replica")
        guard case .found(let found) = await RedisAnswerTierTests.lookup(tier, key) else {
            Issue.record("the stored answer was not found")
            return
        }
        #expect(found.addresses == ["192.0.2.1"])
    }
}
