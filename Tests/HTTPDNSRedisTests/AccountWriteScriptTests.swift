import Foundation
import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSRedis

/// The account write script against a real redis-server: a write whose deadline has passed by
/// Redis's clock is refused and stores, counts and publishes nothing.
@Suite(.serialized) struct AccountWriteScriptTests {
    private func write(_ connection: RedisConnection, id: String, deadline: Int64, ifVersion: String? = nil) async throws -> RedisReply {
        let body = #""id":"\#(id)","config":{}}"#
        return try await connection.run(
            [
                "EVAL", RedisSharedAccounts.writeScript, "2", "t:accounts", "t:accounts:version", id, body, "0", "t:channel",
                String(deadline),
            ] + (ifVersion.map { [$0] } ?? []))
    }

    @Test func aWriteAfterItsDeadlineIsRefusedAndChangesNothing() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let connection = try RedisConnectionTests.connection(server)
        defer { connection.shutdown() }
        try await RedisConnectionTests.waitUntil(true, connection)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let late = await #expect(throws: RedisError.self) { try await write(connection, id: "ghost", deadline: now - 1000) }
        #expect(late?.code == .server)
        #expect(late?.message.contains("LATE") == true, "\(String(describing: late))")
        #expect(try server.cli(["HEXISTS", "t:accounts", "ghost"]) == "0")
        #expect(try server.cli(["EXISTS", "t:accounts:version"]) == "0")
        let stored = try await write(connection, id: "shop", deadline: now + 60_000)
        #expect(stored.string?.hasPrefix(#"{"version":1,"id":"shop""#) == true, "\(stored)")
    }

    /// A conditional write (the tenant's policy) is made only while the account is held at the
    /// version it names (0: no record), and a refused one stores, counts and publishes nothing.
    @Test func aConditionalWriteNeedsTheVersionItNames() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let connection = try RedisConnectionTests.connection(server)
        defer { connection.shutdown() }
        try await RedisConnectionTests.waitUntil(true, connection)
        let later = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
        let first = try await write(connection, id: "shop", deadline: later, ifVersion: "0")
        #expect(first.string?.hasPrefix(#"{"version":1,"id":"shop""#) == true, "\(first)")
        let stale = await #expect(throws: RedisError.self) { try await write(connection, id: "shop", deadline: later, ifVersion: "0") }
        #expect(stale?.code == .server && stale?.message.hasPrefix("STALE") == true, "\(String(describing: stale))")
        #expect(try server.cli(["GET", "t:accounts:version"]) == "1")
        let second = try await write(connection, id: "shop", deadline: later, ifVersion: "1")
        #expect(second.string?.hasPrefix(#"{"version":2,"id":"shop""#) == true, "\(second)")
        // An empty condition is no condition (the admin API's writes).
        let admin = try await write(connection, id: "shop", deadline: later, ifVersion: "")
        #expect(admin.string?.hasPrefix(#"{"version":3,"id":"shop""#) == true, "\(admin)")
    }
}
