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

    /// The addresses of the answer a lookup found (nil for a miss).
    static func foundAddresses(_ tier: RedisAnswerTier, _ key: CacheKey) async throws -> [String]? {
        guard case .found(let found) = await RedisAnswerTierTests.lookup(tier, key) else { return nil }
        return found.addresses
    }

    static func replies(_ client: RedisClient) -> UInt64 { client.metrics.snapshot["answers"]?.latency.count ?? 0 }

    /// One replica's tier on a real redis-server, connected, for `body`; shut down after.
    static func withTier(_ body: (RedisServerProcess, RedisClient, RedisAnswerTier) async throws -> Void) async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let (client, tier) = try RedisAnswerTierTests.tier(server)
        defer { client.shutdown() }
        try await RedisAnswerTierTests.waitUp(client)
        try await body(server, client, tier)
    }

    @Test func aMissResolvedUpstreamSendsFourPlainCommandsAndLeavesNoLock() async throws {
        try await Self.withTier { server, client, tier in
            try server.cli(["CONFIG", "RESETSTAT"])
            let before = Self.replies(client)
            let key = Self.key("www.example.com")
            #expect(await RedisAnswerTierTests.lookup(tier, key) == .miss(holdsLock: true))
            tier.store(account: "shop", key: key, entry: entry, keepSeconds: 400, holdsLock: true)
            try await Self.eventually("the store's replies counted") { Self.replies(client) == before + 4 }
            // The lookup's `SET NX PX` and `GET`, the store's `SET PX` and `DEL`: no script.
            let calls = try Self.commandCalls(server).filter { !$0.key.hasPrefix("config") }
            #expect(calls == ["set": 2, "get": 1, "del": 1], "\(calls)")
            #expect(try server.cli(["EXISTS", answerKey + ":lock"]) == "0")
            let ttl = Int(try server.cli(["PTTL", answerKey])) ?? 0
            #expect(ttl > 300_000 && ttl <= 400_000)
            try await Task.sleep(for: .milliseconds(100))
            #expect(Self.replies(client) == before + 4)
        }
    }

    @Test func aLookupThatFindsAFreshAnswerLeavesTheLockItTookFree() async throws {
        try await Self.withTier { server, client, tier in
            let key = Self.key("www.example.com")
            tier.store(account: "shop", key: key, entry: entry, keepSeconds: 400, holdsLock: false)
            try await Self.eventually("the answer stored") { try server.cli(["EXISTS", answerKey]) == "1" }
            let before = Self.replies(client)
            #expect(try await Self.foundAddresses(tier, key) == ["192.0.2.1"])
            // The lock's `SET NX` took the free lock; the `DEL` after the answer gives it back (the
            // tests' locks would otherwise last two minutes).
            try await Self.eventually("the lookup's three replies counted") { Self.replies(client) == before + 3 }
            #expect(try server.cli(["EXISTS", answerKey + ":lock"]) == "0")
        }
    }

    @Test func aLookupThatFindsAnAnswerLeavesAnotherReplicasLockAlone() async throws {
        try await Self.withTier { server, client, tier in
            let key = Self.key("www.example.com")
            tier.store(account: "shop", key: key, entry: entry, keepSeconds: 400, holdsLock: false)
            try await Self.eventually("the answer stored") { try server.cli(["EXISTS", answerKey]) == "1" }
            try server.cli(["SET", answerKey + ":lock", "other-replica", "PX", "60000"])
            let before = Self.replies(client)
            #expect(try await Self.foundAddresses(tier, key) == ["192.0.2.1"])
            try await Task.sleep(for: .milliseconds(100))
            #expect(Self.replies(client) == before + 2)
            #expect(try server.cli(["GET", answerKey + ":lock"]) == "other-replica")
        }
    }

    @Test func aReleaseAfterRedisLostItsScriptsStillReleases() async throws {
        try await Self.withTier { server, _, tier in
            let key = Self.key("www.example.com")
            #expect(await RedisAnswerTierTests.lookup(tier, key) == .miss(holdsLock: true))
            #expect(try server.cli(["GET", answerKey + ":lock"]) == tier.replicaID)
            try server.cli(["SCRIPT", "FLUSH"])
            tier.release(account: "shop", key: key)
            try await Self.eventually("the lock released") { try server.cli(["EXISTS", answerKey + ":lock"]) == "0" }
        }
    }

    @Test func aReleaseLeavesALockAnotherReplicaTookMeanwhile() async throws {
        try await Self.withTier { server, client, tier in
            let key = Self.key("www.example.com")
            #expect(await RedisAnswerTierTests.lookup(tier, key) == .miss(holdsLock: true))
            // This replica's lock expired and another replica took it; this one's resolution failed.
            try server.cli(["SET", answerKey + ":lock", "other-replica", "PX", "60000"])
            let before = Self.replies(client)
            tier.release(account: "shop", key: key)
            try await Self.eventually("the release's reply counted") { Self.replies(client) >= before + 1 }
            #expect(try server.cli(["GET", answerKey + ":lock"]) == "other-replica")
        }
    }

    @Test func theWriteBackDeletesTheLockEvenWhenAnotherReplicaTookIt() async throws {
        try await Self.withTier { server, _, tier in
            let key = Self.key("www.example.com")
            #expect(await RedisAnswerTierTests.lookup(tier, key) == .miss(holdsLock: true))
            // This replica's lock expired and another replica took it: with the answer stored, that
            // lock would only make replicas whose copy goes stale wait on it.
            try server.cli(["SET", answerKey + ":lock", "other-replica", "PX", "60000"])
            tier.store(account: "shop", key: key, entry: entry, keepSeconds: 400, holdsLock: true)
            try await Self.eventually("the lock deleted") { try server.cli(["EXISTS", answerKey + ":lock"]) == "0" }
            #expect(try server.cli(["EXISTS", answerKey]) == "1")
            guard case .found(let found) = await RedisAnswerTierTests.lookup(tier, key) else {
                Issue.record("the stored answer was not found")
                return
            }
            #expect(found.addresses == ["192.0.2.1"])
        }
    }
}
