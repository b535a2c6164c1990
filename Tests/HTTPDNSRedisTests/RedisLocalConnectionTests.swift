import Foundation
import HTTPDNSCore
import HTTPDNSLoop
import HTTPDNSTestSupport
import Synchronization
import Testing

@testable import HTTPDNSRedis

/// What one completion saw: the thread it ran on, its result, and whether the command given from
/// inside it was left for the host's next turn.
private struct Replied: Sendable {
    var thread: UInt
    var result: Result<RedisReply, RedisError>
    var nextWasTaken: Bool
}

/// `connection`'s local connection on a thread standing in for an HTTP thread
/// (`GuestHostThread`); returns the thread's identity.
private func onCarryingThread(
    _ connection: RedisConnection, step: @escaping @Sendable () -> Void, until done: @escaping @Sendable () -> Bool,
    after: @escaping @Sendable () -> Void = {}
) async -> UInt {
    await GuestHostThread.run(
        report: { Issue.record("loop failure: \($0)") }, makeGuest: { connection.localConnection(on: $0) }, step: step, until: done,
        after: after)
}

/// ``RedisConnection/localConnection(on:)``: commands given on a thread that carries the local
/// connection go out and are answered on that thread, against a real redis-server; until its
/// handshake is done, and after its host stops, the connection's own thread takes them.
@Suite(.serialized) struct RedisLocalConnectionTests {
    /// Whether the calling thread's local connection has done its handshake.
    private static var localIsReady: Bool { RedisLocalConnection.current?.isReady ?? false }

    @Test func commandsGivenOnTheCarryingThreadAreSentAndAnsweredThere() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let connection = try RedisConnectionTests.connection(server)
        defer { connection.shutdown() }
        let replied = Mutex<[Replied]>([])
        let started = Atomic<Bool>(false)
        let total = 20
        // Each completion gives the next command, as the engine's completions do (a lookup's
        // answer starts the upstream request, whose answer is stored): it must wait for the
        // host's next turn, not re-enter hiredis from its callback.
        @Sendable func increment(_ index: Int) {
            connection.command(["INCR", "local"]) { result in
                var taken = true
                if index + 1 < total {
                    increment(index + 1)
                    taken = RedisLocalConnection.current?.hasPending == true
                }
                replied.withLock { $0.append(Replied(thread: UInt(pthread_self()), result: result, nextWasTaken: taken)) }
            }
        }
        let host = await onCarryingThread(
            connection,
            step: {
                guard !started.load(ordering: .relaxed), Self.localIsReady else { return }
                started.store(true, ordering: .relaxed)
                increment(0)
            }, until: { replied.withLock { $0.count } == total })
        let all = replied.withLock { $0 }
        try #require(all.count == total)
        #expect(all.allSatisfy { $0.thread == host }, "a reply was completed on another thread than the one that asked")
        #expect(all.allSatisfy { $0.nextWasTaken })
        #expect(try all.map { try $0.result.get() } == (1...total).map { RedisReply.integer(Int64($0)) })
    }

    @Test func beforeItsHandshakeAndAfterItsHostStopsTheConnectionsOwnThreadTakesTheCommands() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let connection = try RedisConnectionTests.connection(server)
        defer { connection.shutdown() }
        let replied = Mutex<[Replied]>([])
        let given = Atomic<Bool>(false)
        let readyAtFirstStep = Atomic<Bool>(true)
        @Sendable func ping() {
            connection.command(["PING"]) { result in
                replied.withLock { $0.append(Replied(thread: UInt(pthread_self()), result: result, nextWasTaken: true)) }
            }
        }
        let host = await onCarryingThread(
            connection,
            step: {
                // The first step runs before the host's first turn: the local connection has
                // started connecting and cannot have done its handshake.
                guard !given.exchange(true, ordering: .relaxed) else { return }
                readyAtFirstStep.store(Self.localIsReady, ordering: .relaxed)
                ping()
            }, until: { replied.withLock { $0.count } == 1 }, after: ping)
        try await RedisConnectionTests.waitUntil(seconds: 30) { replied.withLock { $0.count } == 2 }
        let wasReady = readyAtFirstStep.load(ordering: .relaxed)
        #expect(!wasReady)
        let all = replied.withLock { $0 }
        #expect(all.allSatisfy { $0.thread != host }, "a command went out on the local connection while it could not take it")
        #expect(try all.map { try $0.result.get() } == [.status("PONG"), .status("PONG")])
    }

    @Test func aLocalConnectionTheServerDroppedComesBackOnItsHostsTurns() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let connection = try RedisConnectionTests.connection(server)
        defer { connection.shutdown() }
        let replied = Mutex<[Replied]>([])
        let killed = Atomic<Bool>(false)
        let outstanding = Atomic<Bool>(false)
        let host = await onCarryingThread(
            connection,
            step: {
                guard Self.localIsReady else { return }
                if !killed.load(ordering: .relaxed) {
                    // Every client connection (this thread's and the connection's own) is closed
                    // by the server before `cli` returns: a command sent on the old one fails.
                    _ = try? server.cli(["CLIENT", "KILL", "TYPE", "normal"])
                    killed.store(true, ordering: .relaxed)
                }
                // One PING at a time while the local connection takes commands, until one is
                // answered: the first may go out on the killed connection and fail.
                guard !outstanding.exchange(true, ordering: .relaxed) else { return }
                connection.command(["PING"]) { result in
                    replied.withLock { $0.append(Replied(thread: UInt(pthread_self()), result: result, nextWasTaken: true)) }
                    outstanding.store(false, ordering: .relaxed)
                }
            }, until: { replied.withLock { $0.contains { (try? $0.result.get()) == .status("PONG") } } })
        let didKill = killed.load(ordering: .relaxed)
        #expect(didKill)
        let all = replied.withLock { $0 }
        #expect(all.contains { (try? $0.result.get()) == .status("PONG") }, "the local connection did not come back within 30 s")
        #expect(all.allSatisfy { $0.thread == host })
    }

    /// `httpdns_redis_thread_connections`: a thread's connection is counted from its start until
    /// its host stops it, and counted up from its handshake on.
    @Test func theMetricsCountTheThreadsConnectionAndWhetherItIsUp() async throws {
        let server = try await RedisServerProcess.start()
        defer { Task { await server.stop() } }
        let metrics = RedisMetrics()
        let connection = try RedisConnectionTests.connection(server, metrics: metrics)
        defer { connection.shutdown() }
        @Sendable func counts() -> [Int] {
            let figures = metrics.snapshot["test"] ?? RedisMetrics.Purpose()
            return [figures.threadConnections, figures.threadConnectionsUp]
        }
        let beforeHandshake = Mutex<[Int]?>(nil)
        let whenReady = Mutex<[Int]?>(nil)
        _ = await onCarryingThread(
            connection,
            step: {
                if beforeHandshake.withLock({ $0 }) == nil { beforeHandshake.withLock { $0 = counts() } }
                if Self.localIsReady { whenReady.withLock { $0 = counts() } }
            }, until: { whenReady.withLock { $0 } != nil })
        #expect(beforeHandshake.withLock { $0 } == [1, 0])
        #expect(whenReady.withLock { $0 } == [1, 1])
        #expect(counts() == [0, 0])
    }

    /// Connecting to a host given by name looks it up (`getaddrinfo`, which blocks): the tier
    /// gives an HTTP thread a connection of its own only for an address, and the thread that
    /// carries one registers it until the host shuts it down.
    @Test func theTierRidesOnAThreadOnlyForAnAddressHost() throws {
        let wake = WakePipe(services: LoopServices(nameThread: { _ in }, report: { _ in }))
        let sockets = EpollSet(wake: wake, name: "test host")
        defer { sockets.close() }
        // Nothing listens on port 1 of loopback: the connection only tries, in the background.
        for (url, rides) in [("redis://localhost:1", false), ("redis://127.0.0.1:1", true), ("redis://[::1]:1", true)] {
            let client = RedisClient(url: try RedisURL(parsing: url, key: "redis"), prefix: "t:", timeoutMilliseconds: 1_000)
            defer { client.shutdown() }
            let guest = RedisAnswerTier(client: client).localConnection(on: sockets)
            #expect((guest != nil) == rides, "\(url)")
            #expect((RedisLocalConnection.current != nil) == rides, "\(url)")
            guest?.shutdown()
            #expect(RedisLocalConnection.current == nil)
        }
    }
}
