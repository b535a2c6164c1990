import Foundation
import HTTPDNSCore
import HTTPDNSTestSupport
import Synchronization
import Testing

@testable import HTTPDNSRedis

/// The connection against a real redis-server on loopback.
@Suite(.serialized) struct RedisConnectionTests {
    /// A connection to `server`. The default timeout (10 s) is a hang guard: a command or an idle
    /// subscriber's health PING that a loaded machine's redis-server answers late must not read as
    /// a timeout or a dead connection; the tests of the timeout pass their own.
    static func connection(
        _ server: RedisServerProcess, purpose: String = "test", timeout: Int = 10_000, url: String? = nil,
        metrics: RedisMetrics = RedisMetrics(),
        onStateChange: (@Sendable (Bool) -> Void)? = nil
    ) throws -> RedisConnection {
        var options = RedisConnection.Options(
            url: try RedisURL(parsing: url ?? server.url, key: "redis"), purpose: purpose, timeoutMilliseconds: timeout)
        options.backoffMaximum = 0.2
        return RedisConnection(options: options, metrics: metrics, onStateChange: onStateChange)
    }

    static func waitUntil(_ up: Bool, _ connection: RedisConnection, seconds: Double = 10) async throws {
        try await waitUntil(seconds: seconds, "the connection being \(up ? "up" : "down")") { connection.isUp == up }
    }

    /// Polls `condition` every 10 ms; throws, naming `what`, after `seconds` (a hang guard) and
    /// the poll's minimum of looks, so that a stalled test task still looks before it gives up.
    static func waitUntil(seconds: Double, _ what: String = "the condition", _ condition: () throws -> Bool) async throws {
        guard try await Poll.until(limit: seconds, every: .milliseconds(10), { try condition() }) else {
            throw HarnessError("\(what) did not hold within \(seconds) s")
        }
    }

    @Test func commandsGetTheirRepliesBinarySafe() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let connection = try Self.connection(server)
        defer { connection.shutdown() }
        try await Self.waitUntil(true, connection)
        let bytes: [UInt8] = [0, 1, 0xFF, 13, 10, 0x24]
        #expect(try await connection.run([Array("SET".utf8), Array("k".utf8), bytes]) == .status("OK"))
        #expect(try await connection.run(["GET", "k"]) == .bulk(bytes))
        #expect(try await connection.run(["GET", "missing"]) == .null)
        #expect(try await connection.run(["INCR", "n"]) == .integer(1))
        #expect(try await connection.run(["RPUSH", "l", "a", "b"]) == .integer(2))
        #expect(try await connection.run(["LRANGE", "l", "0", "-1"]) == .array([.bulk(Array("a".utf8)), .bulk(Array("b".utf8))]))
        let error = await #expect(throws: RedisError.self) { try await connection.run(["INCR", "k"]) }
        #expect(error?.code == .server)
    }

    @Test func commandsQueuedWhileConnectingWaitForTheConnection() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        // The command's timeout runs while it waits for the handshake: 10 s, so that a loaded
        // machine's slow connect is not mistaken for a command that never waited.
        let connection = try Self.connection(server, timeout: 10_000)
        defer { connection.shutdown() }
        // Sent at once, before the handshake can have finished.
        #expect(try await connection.run(["PING"]) == .status("PONG"))
    }

    @Test func aPausedServerTimesCommandsOutAndTheConnectionComesBackAfterIt() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let metrics = RedisMetrics()
        let connection = try Self.connection(server, timeout: 50, metrics: metrics)
        defer { connection.shutdown() }
        try await Self.waitUntil(true, connection)
        server.pause()
        // Timed to the completion, which the connection's thread calls: not to when this task
        // next gets a thread of the (possibly saturated) cooperative pool.
        let started = Date()
        let (result, endedAt) = await withCheckedContinuation { continuation in
            connection.command(["GET", "k"]) { continuation.resume(returning: ($0, Date())) }
        }
        let waited = endedAt.timeIntervalSince(started)
        guard case .failure(let error) = result else {
            Issue.record("expected a timeout, got \(result)")
            return
        }
        #expect(error.code == .timeout)
        // Without a deadline the reply would never come while the server is paused (30 s here).
        #expect(waited < 15)
        // Unanswered for max(1 s, 20 × 50 ms): the connection is dropped and reported down.
        try await Self.waitUntil(false, connection, seconds: 15)
        #expect(metrics.snapshot["test"]?.up == false)
        #expect((metrics.snapshot["test"]?.errors["timeout"] ?? 0) >= 1)
        server.resume()
        try await Self.waitUntil(true, connection, seconds: 15)
        // Commands work again. Each has this connection's 50 ms timeout, which a redis-server
        // descheduled on a loaded machine can miss (and a second of that drops the connection
        // again): asked until one PONG comes back, with a 15 s hang guard.
        let deadline = Date().addingTimeInterval(15)
        var reply = try? await connection.run(["PING"])
        while reply == nil && Date() < deadline {
            try await Self.waitUntil(true, connection, seconds: 15)
            reply = try? await connection.run(["PING"])
        }
        #expect(reply == .status("PONG"))
        #expect(metrics.snapshot["test"]?.up == true)
    }

    @Test func whileDownCommandsFailAtOnceAndAfterARestartTheyWorkAgain() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let changes = Mutex<[Bool]>([])
        let connection = try Self.connection(server, timeout: 5000) { up in changes.withLock { $0.append(up) } }
        defer { connection.shutdown() }
        try await Self.waitUntil(true, connection)
        await server.kill()
        try await Self.waitUntil(false, connection)
        // With a 5 s timeout, an error well before it is the connection saying it is down.
        let error = await #expect(throws: RedisError.self) { try await connection.run(["PING"]) }
        #expect(error?.code == .unavailable)
        try await server.restart()
        try await Self.waitUntil(true, connection, seconds: 15)
        #expect(try await connection.run(["PING"]) == .status("PONG"))
        #expect(changes.withLock { $0 } == [true, false, true])
    }

    @Test func authAndSelectComeFromTheURL() async throws {
        let server = try await RedisServerProcess.start(password: "pa55-word")
        defer { Task { await server.stop() } }
        let connection = try Self.connection(server, url: "redis://:pa55-word@127.0.0.1:\(server.port)/3")
        defer { connection.shutdown() }
        try await Self.waitUntil(true, connection)
        _ = try await connection.run(["SET", "in3", "yes"])
        #expect(try server.cli(["-n", "3", "GET", "in3"]) == "yes")
        #expect(try server.cli(["-n", "0", "EXISTS", "in3"]) == "0")
    }

    @Test func aWrongPasswordNeverMakesTheConnectionUp() async throws {
        let server = try await RedisServerProcess.start(password: "right-one")
        defer { Task { await server.stop() } }
        let connection = try Self.connection(server, url: "redis://:wrong-one@127.0.0.1:\(server.port)")
        defer { connection.shutdown() }
        try await Task.sleep(for: .milliseconds(500))
        #expect(!connection.isUp)
        let error = await #expect(throws: RedisError.self) { try await connection.run(["PING"]) }
        #expect(error?.code == .unavailable || error?.code == .timeout)
    }

    @Test func subscribersGetMessagesAndResubscribeAfterARestart() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let received = Mutex<[RedisConnection.Message]>([])
        let subscriber = try Self.connection(server, purpose: "sub")
        defer { subscriber.shutdown() }
        subscriber.subscribe(["chan"]) { message in received.withLock { $0.append(message) } }
        try await Self.waitUntil(true, subscriber)
        try await Self.publishUntilReceived(server, "one") { received.withLock { $0 } }
        #expect(received.withLock { $0.first } == RedisConnection.Message(channel: "chan", payload: Array("one".utf8)))
        let error = await #expect(throws: RedisError.self) { try await subscriber.run(["GET", "x"]) }
        #expect(error?.code == .client)
        await server.kill()
        try await Self.waitUntil(false, subscriber)
        try await server.restart()
        try await Self.waitUntil(true, subscriber, seconds: 15)
        try await Self.publishUntilReceived(server, "two") { received.withLock { $0 } }
    }

    /// A subscriber sends nothing, so it has no reply to miss: its health `PING` (after 1 s of
    /// silence) is what notices a paused server. Answered, the connection stays; unanswered
    /// within the timeout, it is dropped, and after the pause re-established and resubscribed.
    @Test func aSubscriberNoticesAPausedServerAndResubscribesAfterIt() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let received = Mutex<[RedisConnection.Message]>([])
        let changes = Mutex<[Bool]>([])
        let subscriber = try Self.connection(server, purpose: "sub") { up in changes.withLock { $0.append(up) } }
        defer { subscriber.shutdown() }
        subscriber.subscribe(["chan"]) { message in received.withLock { $0.append(message) } }
        try await Self.waitUntil(seconds: 10) { changes.withLock { $0.count } >= 1 }
        try await Self.publishUntilReceived(server, "before") { received.withLock { $0 } }
        // The idle subscriber's PING reaches Redis and its ["pong", ""] is taken in stride: the
        // connection is the one it was (one `up`), still subscribed.
        let pinged = try await Poll.until(limit: 30, every: .milliseconds(100)) {
            try server.cli(["CLIENT", "LIST"]).split(whereSeparator: \.isNewline).contains {
                $0.contains(" sub=1 ") && $0.contains(" cmd=ping ")
            }
        }
        guard pinged else { throw HarnessError("the subscriber sent no PING: \(try server.cli(["CLIENT", "LIST"]))") }
        #expect(changes.withLock { $0 } == [true])
        try await Self.publishUntilReceived(server, "between") { received.withLock { $0 } }
        server.pause()
        try await Self.waitUntil(false, subscriber, seconds: 60)
        server.resume()
        // `isUp` turns true before `onStateChange` is called (on the loop thread, after a log
        // line): what is checked is the calls, so wait for the third.
        try await Self.waitUntil(seconds: 60) { changes.withLock { $0.count } >= 3 }
        #expect(changes.withLock { $0 } == [true, false, true])
        try await Self.publishUntilReceived(server, "after") { received.withLock { $0 } }
    }

    /// Publishes `payload` on `chan` until the subscriber has it (a subscription is confirmed
    /// asynchronously: the first messages may precede it).
    static func publishUntilReceived(_ server: RedisServerProcess, _ payload: String, _ received: () -> [RedisConnection.Message])
        async throws
    {
        let delivered = try await Poll.until(limit: 10, every: .milliseconds(50)) {
            if received().contains(where: { $0.payload == Array(payload.utf8) }) { return true }
            try server.cli(["PUBLISH", "chan", payload])
            return false
        }
        guard delivered else { throw HarnessError("no message \(payload)") }
    }

    @Test func shutdownFailsWhatIsLeftAndLaterCommandsAtOnce() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let connection = try Self.connection(server)
        try await Self.waitUntil(true, connection)
        connection.shutdown()
        let error = await #expect(throws: RedisError.self) { try await connection.run(["PING"]) }
        #expect(error?.code == .shutdown)
        #expect(!connection.isUp)
    }
}

extension RedisConnection {
    /// The command as an `async` call, for tests.
    func run(_ arguments: [[UInt8]]) async throws(RedisError) -> RedisReply {
        let result = await withCheckedContinuation { continuation in
            command(arguments) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    func run(_ arguments: [String]) async throws(RedisError) -> RedisReply {
        try await run(arguments.map { Array($0.utf8) })
    }
}
