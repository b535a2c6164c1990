import HTTPDNSCore
import HTTPDNSLoop
import Synchronization

/// One hiredis async connection for one purpose (answers, accounts, invalidation, ...), driven by
/// its own event-loop thread (`httpdns-redis-<purpose>`), like the curl loop.
///
/// ``command(_:completion:)`` and ``subscribe(_:handler:)`` may be called from any thread and
/// never block: the work is queued under a lock and the loop is woken through a pipe. Every
/// completion runs exactly once, on the loop thread, outside any lock; it must be quick.
///
/// The loop connects at once and after every loss, with a backoff (0.1 s doubling to 5 s), sends
/// `AUTH` and `SELECT` from the URL, then `PING`: the connection is up when `PONG` comes back.
/// While it is down, commands fail at once with `.unavailable` (nothing waits on a Redis that is
/// gone); while it connects they wait, each for the timeout at most. Each command ends within
/// `timeoutMilliseconds` with a reply or `.timeout`. A connection whose commands go unanswered
/// for `max(1 s, 20 × timeout)` (a paused or wedged server) is dropped and re-established.
///
/// A connection that subscribes is a subscriber only (Redis allows nothing else on it): its
/// `command` calls fail with `.client`. Subscriptions are sent again after every reconnect. A
/// subscriber that has heard nothing for `healthInterval` (1 s) sends `PING`; without a reply
/// within the timeout (a paused or silently partitioned server) it is dropped and re-established.
public final class RedisConnection: Sendable {
    /// How the connection behaves.
    public struct Options: Sendable {
        public var url: RedisURL
        /// Names the thread, the log lines and the `purpose` label of the metrics.
        public var purpose: String
        /// Milliseconds a command may take (`redisTimeout`).
        public var timeoutMilliseconds: Int
        /// Seconds a connection attempt (TCP, AUTH, SELECT, PING) may take.
        public var connectTimeout: Double
        /// Seconds without a reply to the oldest unanswered command before the connection is
        /// deemed dead.
        public var deadAfter: Double
        /// Seconds a subscriber may hear nothing from the server before it sends a `PING` (which
        /// must be answered within the timeout, or the connection is dropped and re-established).
        public var healthInterval = 1.0
        /// Commands waiting or in flight at most; beyond, `.overloaded` at once.
        public var maximumPending = 10_000
        /// Reconnect delays.
        public var backoffInitial = 0.1
        public var backoffMaximum = 5.0

        public init(url: RedisURL, purpose: String, timeoutMilliseconds: Int) {
            self.url = url
            self.purpose = purpose
            self.timeoutMilliseconds = timeoutMilliseconds
            deadAfter = max(1, Double(timeoutMilliseconds) * 20 / 1000)
            connectTimeout = deadAfter
        }
    }

    /// A message received on a subscribed channel.
    public struct Message: Sendable, Equatable {
        public var channel: String
        public var payload: [UInt8]
    }

    let shared: RedisLoopShared
    public let purpose: String
    private let options: Options

    /// Starts the loop thread, which connects at once.
    /// - Parameters:
    ///   - metrics: where `up`, errors and latency are recorded under `options.purpose`.
    ///   - onStateChange: called on the loop thread with true each time the connection becomes
    ///     ready (after the handshake; subscriptions are being re-sent) and false each time it is lost.
    public init(options: Options, metrics: RedisMetrics, onStateChange: (@Sendable (Bool) -> Void)? = nil) {
        purpose = options.purpose
        self.options = options
        let shared = RedisLoopShared(metrics: metrics, purpose: options.purpose, latency: metrics.register(options.purpose))
        self.shared = shared
        shared.queue.startThread(named: "redis-\(options.purpose)") {
            RedisLoopWorker(shared: shared, options: options, onStateChange: onStateChange).run()
        }
    }

    deinit {
        shutdown()
    }

    /// True while the connection is ready (handshake done).
    public var isUp: Bool { shared.up.load(ordering: .relaxed) }

    /// Sends one command (`arguments[0]` is its name; every argument binary-safe). `completion`
    /// gets the reply, or a `RedisError`: an error reply is `.server`.
    /// On a thread that carries this connection's ``localConnection(on:)``, the command goes
    /// out on that thread's own connection while it is ready, and `completion` runs there.
    public func command(_ arguments: [[UInt8]], completion: @escaping @Sendable (Result<RedisReply, RedisError>) -> Void) {
        send(RESPCommand.encode(arguments), completion: completion)
    }

    /// Sends a command already in RESP (`RESPCommand`), as ``command(_:completion:)`` does.
    func send(_ wire: [UInt8], completion: @escaping @Sendable (Result<RedisReply, RedisError>) -> Void) {
        let pending = PendingCommand(wire: wire, completion: completion)
        if let local = RedisLocalConnection.current, local.owner === shared, local.take(pending) { return }
        guard shared.queue.enqueue(.command(pending)) else {
            completion(.failure(RedisError(.shutdown, "the \(purpose) Redis connection is shut down")))
            return
        }
    }

    /// The same with text arguments (UTF-8).
    public func command(_ arguments: [String], completion: @escaping @Sendable (Result<RedisReply, RedisError>) -> Void) {
        command(arguments.map { Array($0.utf8) }, completion: completion)
    }

    /// A second connection to the same server that rides on the calling thread's event loop (an
    /// HTTP server thread; `sockets` is its epoll set): from now until the guest's `shutdown()`,
    /// ``command(_:completion:)`` called on this thread is sent and answered on this thread
    /// while that connection is ready (its own thread takes them otherwise). Call it on that
    /// thread; not for a subscriber.
    package func localConnection(on sockets: EpollSet) -> any LoopGuest {
        RedisLocalConnection(sockets: sockets, owner: shared, options: options)
    }

    /// Subscribes to `channels` (`SUBSCRIBE`), now and after every reconnect; `handler` gets each
    /// message, on the loop thread. Messages published while the connection was down are lost:
    /// use `onStateChange` to resynchronise.
    public func subscribe(_ channels: [String], handler: @escaping @Sendable (Message) -> Void) {
        _ = shared.queue.enqueue(.subscribe(channels, handler))
    }

    /// Stops the loop (failing waiting commands with `.shutdown`), closes the connection, and
    /// waits for the thread unless called from it. Idempotent.
    public func shutdown() {
        shared.queue.stopAndWait()
    }
}

/// What callers hand the loop thread.
enum RedisWork: Sendable {
    case command(PendingCommand)
    case subscribe([String], @Sendable (RedisConnection.Message) -> Void)
}

/// One command from a caller, until its completion has run. Its deadline starts when it is queued.
final class PendingCommand: @unchecked Sendable {
    /// The command in RESP, encoded when it was given (`RESPCommand`).
    let wire: [UInt8]
    /// Nil once called (a reply, a timeout, a loss): the first of them wins. Touched on the loop
    /// thread only, after the caller's thread handed it over through the queue's lock.
    private var completion: (@Sendable (Result<RedisReply, RedisError>) -> Void)?
    let queuedAt = MonotonicClock.nanoseconds()
    /// `MonotonicClock` nanoseconds when hiredis was given the command (0 before).
    var sentAt: UInt64 = 0

    init(wire: [UInt8], completion: @escaping @Sendable (Result<RedisReply, RedisError>) -> Void) {
        self.wire = wire
        self.completion = completion
    }

    var isCompleted: Bool { completion == nil }

    /// Calls the completion unless it was called already; returns whether it did.
    @discardableResult
    func complete(_ result: Result<RedisReply, RedisError>) -> Bool {
        guard let completion else { return false }
        self.completion = nil
        completion(result)
        return true
    }
}

/// What callers and the loop thread share: the work queue with its wake-up pipe, the `up` flag.
final class RedisLoopShared: Sendable {
    let queue = LoopQueue<RedisWork>(services: .service)
    let up = Atomic<Bool>(false)
    let metrics: RedisMetrics
    let purpose: String
    /// The purpose's command latencies (`RedisMetrics.register`), slot 0.
    let latency: DurationHistograms

    init(metrics: RedisMetrics, purpose: String, latency: DurationHistograms) {
        self.metrics = metrics
        self.purpose = purpose
        self.latency = latency
    }
}
