import CHiredis
import HTTPDNSCore
import HTTPDNSLoop

#if canImport(Glibc)
    import Glibc
#endif

/// The loop thread's side of ``RedisConnection``: owns the hiredis async context (never touched
/// by another thread), watches its socket in an `EpollSet` through hiredis' `ev` hooks, and
/// enforces every deadline itself (hiredis 0.14 has no timeouts of its own in async mode).
/// Lives and dies on the loop thread: the connection's own (`run()`), or a host loop's that it
/// rides on (``RedisLocalConnection``, whose host calls `turn` and `handle`).
final class RedisLoopWorker {
    enum Phase {
        /// No context; the next attempt at `retryAt` (`MonotonicClock` nanoseconds).
        case down(retryAt: UInt64)
        /// A context exists; the handshake must be done by `deadline`.
        case connecting(deadline: UInt64)
        case ready
    }

    private let shared: RedisLoopShared
    let options: RedisConnection.Options
    private let onStateChange: (@Sendable (Bool) -> Void)?
    private let sockets: EpollSet
    /// Rides on a host loop, beside the connection's own thread: its state changes are logged
    /// at debug level only and leave `up`, the metrics' gauge and `onStateChange` to the
    /// connection's own thread.
    private let isLocal: Bool
    let timeout: UInt64
    let deadAfter: UInt64
    private let connectTimeout: UInt64
    let healthInterval: UInt64
    var purpose: String { options.purpose }

    var context: UnsafeMutablePointer<redisAsyncContext>?
    /// The context's socket while it is watched, and the events the epoll set watches on it.
    private var watchedFD: Int32 = -1
    private var watching = (read: false, write: false)
    /// The events hiredis wants watched (its `ev` hooks set them; `syncWatch` applies them).
    var wantRead = false
    var wantWrite = false
    /// Set when the context was asked to go (`redisAsyncFree` inside a callback is deferred):
    /// nothing more is sent on it.
    var dropping = false
    private var dropReason: String?
    var phase = Phase.down(retryAt: 0)
    private var backoff: RedisBackoff
    /// The handshake commands sent and not answered yet, in order.
    private var handshake: [String] = []
    /// Commands that arrived while connecting, sent once ready.
    private var waiting: [PendingCommand] = []
    /// Commands given to hiredis, unanswered, in the order sent (Redis answers in that order).
    /// This and `deadlines` are touched for every command, on the loop thread only, and no
    /// completion reaches them (a completion's new command goes to a queue, never to the
    /// worker): without the runtime's exclusivity checks.
    @exclusivity(unchecked) var inFlight = FIFO<PendingCommand>()
    /// Every command by arrival: all share one timeout, so this is also their deadline order.
    @exclusivity(unchecked) var deadlines = FIFO<PendingCommand>()
    private var subscriptions: [String: @Sendable (RedisConnection.Message) -> Void] = [:]
    /// When a reply last arrived.
    var lastReadAt: UInt64 = 0
    /// Whether SUBSCRIBE went out on the current context (hiredis holds it subscribed from then).
    var subscribedContext = false
    /// A subscriber's liveness, which sends nothing else: when its socket was last readable, and
    /// when the health `PING` now unanswered went out (nil: none is).
    var heardAt: UInt64 = 0
    var healthPingSentAt: UInt64?
    /// Whether the last state reported (log, `up`, `onStateChange`) was up; nil before the first.
    private var reportedUp: Bool?

    /// Whether the last state reported was up.
    var isReportedUp: Bool { reportedUp == true }
    private var stopping = false

    /// - Parameter hostSockets: the epoll set of the host loop this worker rides on; nil for the
    ///   connection's own thread, whose set this creates.
    init(
        shared: RedisLoopShared, options: RedisConnection.Options, onStateChange: (@Sendable (Bool) -> Void)?,
        hostSockets: EpollSet? = nil
    ) {
        self.shared = shared
        self.options = options
        self.onStateChange = onStateChange
        sockets = hostSockets ?? EpollSet(wake: shared.queue.wake, name: "redis \(options.purpose)")
        isLocal = hostSockets != nil
        timeout = UInt64(max(1, options.timeoutMilliseconds)) * 1_000_000
        deadAfter = UInt64(max(0.001, options.deadAfter) * 1e9)
        connectTimeout = UInt64(max(0.001, options.connectTimeout) * 1e9)
        healthInterval = UInt64(max(0.001, options.healthInterval) * 1e9)
        backoff = RedisBackoff(initial: options.backoffInitial, maximum: options.backoffMaximum)
    }

    /// Runs until `shutdown()`; then fails what is left and frees the context.
    /// The connection's own thread only: a worker on a host loop is driven by its host.
    func run() {
        connect()
        var woken = true
        while true {
            let (batch, stop) = woken ? shared.queue.take() : ([], false)
            woken = false
            if stop {
                finish(batch)
                return
            }
            let wait = turn(batch)
            woken = sockets.wait(milliseconds: wait) { ready in _ = handle(ready) }
            if woken { shared.queue.wake.drain() }
        }
    }

    /// One turn of the loop between two waits: takes `batch`, writes what hiredis holds,
    /// enforces the deadlines, and watches what hiredis wants. Returns how long the loop may
    /// wait (milliseconds; -1: until a socket or a wake-up).
    func turn(_ batch: [RedisWork]) -> Int32 {
        for work in batch { accept(work) }
        flush()
        let wait = tick()
        syncWatch()
        return wait
    }

    /// Ready, with no command waiting, in flight, or answered and not yet taken off the
    /// deadlines: nothing is due until a command comes.
    var isIdle: Bool {
        guard case .ready = phase else { return false }
        return deadlines.isEmpty && !dropping
    }

    /// Whether a command given now is sent at once (the handshake is done).
    var isReady: Bool {
        guard case .ready = phase else { return false }
        return context != nil && !dropping
    }

    // MARK: Work from callers

    private func accept(_ work: RedisWork) {
        switch work {
        case .command(let pending):
            if !subscriptions.isEmpty {
                fail(pending, RedisError(.client, "the \(purpose) Redis connection is a subscriber: send commands on another purpose"))
                return
            }
            if waiting.count + inFlight.count >= options.maximumPending {
                fail(
                    pending,
                    RedisError(.overloaded, "\(options.maximumPending) commands already waiting on the \(purpose) Redis connection"))
                return
            }
            switch phase {
            case .ready:
                deadlines.append(pending)
                send(pending)
            case .connecting:
                deadlines.append(pending)
                waiting.append(pending)
            case .down:
                fail(pending, RedisError(.unavailable, "not connected to Redis (\(purpose))"))
            }
        case .subscribe(let channels, let handler):
            for channel in channels { subscriptions[channel] = handler }
            if case .ready = phase { sendSubscribe(channels) }
        }
    }

    /// Completes `pending` with `error` (unless it completed already) and counts it.
    func fail(_ pending: PendingCommand, _ error: RedisError) {
        if pending.complete(.failure(error)) { shared.metrics.recordError(purpose, error.code) }
    }

    // MARK: Connection

    /// Starts a connection attempt: the context, its hooks, and the handshake queued behind it.
    func connect() {
        dropping = false
        dropReason = nil
        subscribedContext = false
        healthPingSentAt = nil
        let target = "\(options.url.host):\(options.url.port)"
        let created: UnsafeMutablePointer<redisAsyncContext>
        do throws(RedisError) {
            created = try RedisCall.checkConnect(redisAsyncConnect(options.url.host, Int32(options.url.port)), target: target)
        } catch {
            becameDown(error.message)
            return
        }
        context = created
        let me = Unmanaged.passUnretained(self).toOpaque()
        chttpdns_redis_attach(created, me, Self.addRead, Self.delRead, Self.addWrite, Self.delWrite, Self.cleanup)
        do throws(RedisError) {
            // Setting the connect callback is what makes hiredis wait for the first write event.
            try RedisCall.check(redisAsyncSetConnectCallback(created, Self.connected), "redisAsyncSetConnectCallback", context: created)
            // TCP keepalive (15 s): a subscriber, which sends nothing, still learns that the host is gone.
            try RedisCall.check(redisEnableKeepAlive(&created.pointee.c), "redisEnableKeepAlive", context: created)
        } catch {
            drop(error.message)
            return
        }
        phase = .connecting(deadline: MonotonicClock.nanoseconds() &+ connectTimeout)
        handshake = []
        let url = options.url
        if let password = url.password {
            sendHandshake("AUTH", url.user.map { ["AUTH", $0, password] } ?? ["AUTH", password])
        }
        if url.database != 0 { sendHandshake("SELECT", ["SELECT", String(url.database)]) }
        sendHandshake("PING", ["PING"])
    }

    private func sendHandshake(_ step: String, _ arguments: [String]) {
        guard let context, !dropping else { return }
        do throws(RedisError) {
            try Self.issue(context, RESPCommand.encode(arguments), callback: Self.handshakeReply, privateData: nil)
            handshake.append(step)
        } catch {
            drop("\(step): \(error.message)")
        }
    }

    /// A handshake reply: an error reply ends the attempt; `PONG` makes the connection ready.
    func handshakeReplied(_ reply: RedisReply) {
        guard !handshake.isEmpty else { return }
        let step = handshake.removeFirst()
        lastReadAt = MonotonicClock.nanoseconds()
        if case .error(let message) = reply {
            // Redis' message names no password (WRONGPASS, NOAUTH, ERR DB index is out of range).
            drop("\(step) refused: \(message)")
            return
        }
        if step == "PING" { becameReady() }
    }

    private func becameReady() {
        phase = .ready
        backoff.reset()
        heardAt = MonotonicClock.nanoseconds()
        report(up: true, "connected to \(options.url)")
        if !subscriptions.isEmpty { sendSubscribe(subscriptions.keys.sorted()) }
        let queued = waiting
        waiting.removeAll()
        for pending in queued where !pending.isCompleted { send(pending) }
    }

    /// Frees the context (hiredis defers it while inside one of its callbacks): its unanswered
    /// commands fail, then `cleanup` reports the loss.
    func drop(_ reason: String) {
        guard let context, !dropping else { return }
        dropping = true
        dropReason = reason
        redisAsyncFree(context)
    }

    /// The context is being freed (hiredis' `cleanup` hook: every command callback has run).
    func contextGone() {
        let reason = dropReason ?? RedisCall.contextError(context) ?? "connection closed"
        if watchedFD >= 0 { sockets.watch(watchedFD, readable: false, writable: false) }
        watchedFD = -1
        watching = (false, false)
        wantRead = false
        wantWrite = false
        context = nil
        handshake = []
        while let pending = inFlight.first {
            inFlight.removeFirst()
            fail(pending, RedisError(.connectionLost, "the Redis connection (\(purpose)) was lost: \(reason)"))
        }
        guard !stopping else { return }
        becameDown(reason)
    }

    /// No connection: commands waiting for one fail now; the next attempt after the backoff.
    private func becameDown(_ reason: String) {
        for pending in waiting { fail(pending, RedisError(.unavailable, "not connected to Redis (\(purpose)): \(reason)")) }
        waiting.removeAll()
        let delay = backoff.nextDelay()
        phase = .down(retryAt: MonotonicClock.nanoseconds() &+ UInt64(delay * 1e9))
        report(
            up: false,
            "\(reportedUp == true ? "lost the connection to" : "cannot connect to") \(options.url): \(reason); retrying with backoff (next in \(delay) s)"
        )
    }

    /// Logs and publishes a change of state, once per change.
    private func report(up: Bool, _ message: String) {
        guard reportedUp != up else { return }
        let first = reportedUp == nil
        reportedUp = up
        guard !isLocal else {
            // Counted in `httpdns_redis_thread_connections`; the first report of down changes
            // no count (it was never up).
            if !(first && !up) { shared.metrics.setThreadConnectionUp(purpose, up) }
            Log.debug("redis (\(purpose), a loop thread's own connection): \(message)")
            return
        }
        shared.up.store(up, ordering: .relaxed)
        shared.metrics.setUp(purpose, up)
        if up { Log.info("redis (\(purpose)): \(message)") } else { Log.warning("redis (\(purpose)): \(message)") }
        if !(first && !up) { onStateChange?(up) }
    }

    // MARK: Commands

    private func send(_ pending: PendingCommand) {
        guard let context, !dropping else {
            fail(pending, RedisError(.connectionLost, "the Redis connection (\(purpose)) is closing"))
            return
        }
        let retained = Unmanaged.passRetained(pending).toOpaque()
        do throws(RedisError) {
            try Self.issue(context, pending.wire, callback: Self.commandReply, privateData: retained)
            pending.sentAt = MonotonicClock.nanoseconds()
            inFlight.append(pending)
        } catch {
            Unmanaged<PendingCommand>.fromOpaque(retained).release()
            fail(pending, error)
        }
    }

    private func sendSubscribe(_ channels: [String]) {
        guard let context, !dropping, !channels.isEmpty else { return }
        do throws(RedisError) {
            try Self.issue(
                context, RESPCommand.encode(["SUBSCRIBE"] + channels), callback: Self.subscriptionReply,
                privateData: nil)
            subscribedContext = true
        } catch {
            drop("SUBSCRIBE: \(error.message)")
        }
    }

    /// A reply to `pending` (nil: the context is being freed with it unanswered).
    func replied(_ pending: PendingCommand, _ reply: RedisReply?) {
        while let front = inFlight.first {
            inFlight.removeFirst()
            if front === pending { break }
        }
        guard let reply else {
            fail(
                pending,
                RedisError(
                    stopping ? .shutdown : .connectionLost,
                    "the Redis connection (\(purpose)) closed before the reply: \(dropReason ?? RedisCall.contextError(context) ?? "connection closed")"
                ))
            return
        }
        let now = MonotonicClock.nanoseconds()
        lastReadAt = now
        shared.latency.record(slot: 0, nanoseconds: now &- pending.sentAt)
        if case .error(let message) = reply {
            fail(pending, RedisError(.server, message))
        } else {
            pending.complete(.success(reply))
        }
    }

    func message(_ reply: RedisReply) {
        lastReadAt = MonotonicClock.nanoseconds()
        guard case .array(let parts) = reply, parts.count == 3, parts[0].string == "message",
            let channel = parts[1].string, let payload = parts[2].bytes, let handler = subscriptions[channel]
        else { return }  // "subscribe" confirmations
        handler(RedisConnection.Message(channel: channel, payload: payload))
    }

    /// The connection's own thread is shutting down: fails what is queued, frees the context
    /// (failing what is in flight), and closes the thread's epoll set.
    private func finish(_ batch: [RedisWork]) {
        stop(failing: batch + shared.queue.close())
        shared.up.store(false, ordering: .relaxed)
        shared.metrics.setUp(purpose, false)
        sockets.close()
    }

    /// Stops for good: fails `batch` and the commands waiting for the handshake, and frees the
    /// context, which fails those in flight and takes its socket out of the epoll set.
    func stop(failing batch: [RedisWork]) {
        stopping = true
        let error = RedisError(.shutdown, "the \(purpose) Redis connection is shut down")
        for work in batch {
            if case .command(let pending) = work { fail(pending, error) }
        }
        for pending in waiting { fail(pending, error) }
        waiting.removeAll()
        if let context {
            dropReason = "shut down"
            dropping = true
            redisAsyncFree(context)
        }
    }

    // MARK: The socket

    /// Handles `ready` when it is this connection's socket; false when it is not.
    func handle(_ ready: EpollSet.Readiness) -> Bool {
        guard ready.fd == watchedFD, watchedFD >= 0 else { return false }
        if ready.readable, subscribedContext { heardAt = MonotonicClock.nanoseconds() }
        if ready.writable || ready.failed, let context, !dropping { redisAsyncHandleWrite(context) }
        if ready.readable || ready.failed, let context, !dropping { redisAsyncHandleRead(context) }
        return true
    }

    /// Writes the commands just queued now, not after an `epoll_wait` for writability.
    private func flush() {
        guard wantWrite, case .ready = phase, let context, !dropping else { return }
        redisAsyncHandleWrite(context)
    }

    /// Brings the epoll set in line with what hiredis wants watched, before each wait and only
    /// if that changed (hiredis asks for the write event with every command: no `epoll_ctl` each).
    private func syncWatch() {
        guard let context else { return }
        let fd = chttpdns_redis_async_fd(context)
        guard fd >= 0, fd != watchedFD || watching != (wantRead, wantWrite) else { return }
        watchedFD = fd
        watching = (wantRead, wantWrite)
        sockets.watch(fd, readable: wantRead, writable: wantWrite)
    }
}

@available(*, unavailable)
extension RedisLoopWorker: Sendable {}
