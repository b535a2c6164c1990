import CHiredis
import HTTPDNSCore
import HTTPDNSLoop

#if canImport(Glibc)
    import Glibc
#endif

/// The loop thread's side of ``RedisConnection``: owns the hiredis async context (never touched
/// by another thread), watches its socket in an `EpollSet` through hiredis' `ev` hooks, and
/// enforces every deadline itself (hiredis 0.14 has no timeouts of its own in async mode).
/// Lives and dies on the loop thread.
final class RedisLoopWorker {
    enum Phase {
        /// No context; the next attempt at `retryAt` (`MonotonicClock` nanoseconds).
        case down(retryAt: UInt64)
        /// A context exists; the handshake must be done by `deadline`.
        case connecting(deadline: UInt64)
        case ready
    }

    private let shared: RedisLoopShared
    private let options: RedisConnection.Options
    private let onStateChange: (@Sendable (Bool) -> Void)?
    private let sockets: EpollSet
    private let timeout: UInt64
    private let deadAfter: UInt64
    private let connectTimeout: UInt64
    private let healthInterval: UInt64
    private var purpose: String { options.purpose }

    private var context: UnsafeMutablePointer<redisAsyncContext>?
    /// The context's socket while it is watched, and the events the epoll set watches on it.
    private var watchedFD: Int32 = -1
    private var watching = (read: false, write: false)
    /// The events hiredis wants watched (its `ev` hooks set them; `syncWatch` applies them).
    var wantRead = false
    var wantWrite = false
    /// Set when the context was asked to go (`redisAsyncFree` inside a callback is deferred):
    /// nothing more is sent on it.
    private var dropping = false
    private var dropReason: String?
    private var phase = Phase.down(retryAt: 0)
    private var backoff: RedisBackoff
    /// The handshake commands sent and not answered yet, in order.
    private var handshake: [String] = []
    /// Commands that arrived while connecting, sent once ready.
    private var waiting: [PendingCommand] = []
    /// Commands given to hiredis, unanswered, in the order sent (Redis answers in that order).
    private var inFlight = FIFO<PendingCommand>()
    /// Every command by arrival: all share one timeout, so this is also their deadline order.
    private var deadlines = FIFO<PendingCommand>()
    private var subscriptions: [String: @Sendable (RedisConnection.Message) -> Void] = [:]
    /// When a reply last arrived.
    private var lastReadAt: UInt64 = 0
    /// Whether SUBSCRIBE went out on the current context (hiredis holds it subscribed from then).
    private var subscribedContext = false
    /// A subscriber's liveness, which sends nothing else: when its socket was last readable, and
    /// when the health `PING` now unanswered went out (nil: none is).
    private var heardAt: UInt64 = 0
    private var healthPingSentAt: UInt64?
    /// Whether the last state reported (log, `up`, `onStateChange`) was up; nil before the first.
    private var reportedUp: Bool?
    private var stopping = false

    init(shared: RedisLoopShared, options: RedisConnection.Options, onStateChange: (@Sendable (Bool) -> Void)?) {
        self.shared = shared
        self.options = options
        self.onStateChange = onStateChange
        sockets = EpollSet(wake: shared.queue.wake, name: "redis \(options.purpose)")
        timeout = UInt64(max(1, options.timeoutMilliseconds)) * 1_000_000
        deadAfter = UInt64(max(0.001, options.deadAfter) * 1e9)
        connectTimeout = UInt64(max(0.001, options.connectTimeout) * 1e9)
        healthInterval = UInt64(max(0.001, options.healthInterval) * 1e9)
        backoff = RedisBackoff(initial: options.backoffInitial, maximum: options.backoffMaximum)
    }

    /// Runs until `shutdown()`; then fails what is left and frees the context.
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
            for work in batch { accept(work) }
            flush()
            let wait = tick()
            syncWatch()
            woken = sockets.wait(milliseconds: wait) { ready in handle(ready) }
            if woken { shared.queue.wake.drain() }
        }
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
    private func fail(_ pending: PendingCommand, _ error: RedisError) {
        if pending.complete(.failure(error)) { shared.metrics.recordError(purpose, error.code) }
    }

    // MARK: Deadlines

    /// Expires commands, drops a dead connection, starts a due reconnection. Returns how many
    /// milliseconds the loop may wait before the next of these is due: -1 (until a socket or the
    /// wake-up pipe) when none is, so that an idle connection's thread sleeps.
    private func tick() -> Int32 {
        var now = MonotonicClock.nanoseconds()
        // Answered commands leave too, so that their deadlines wake nobody.
        while let front = deadlines.first, front.isCompleted || front.queuedAt &+ timeout <= now {
            deadlines.removeFirst()
            guard !front.isCompleted else { continue }  // answered: no error text to build
            fail(front, RedisError(.timeout, "no reply from Redis (\(purpose)) within \(options.timeoutMilliseconds) ms"))
        }
        switch phase {
        case .down(let retryAt) where retryAt <= now:
            connect()
            now = MonotonicClock.nanoseconds()
        case .connecting(let deadline) where deadline <= now:
            drop("no connection and handshake within \(options.connectTimeout) s")
        default:
            break
        }
        if let oldest = inFlight.first, !dropping, max(oldest.sentAt, lastReadAt) &+ deadAfter <= now {
            drop("no reply for \(options.deadAfter) s")
        }
        let healthDue = checkHealth(now)
        return Self.waitMilliseconds(
            now: now, phase: phase, oldestQueuedAt: deadlines.first?.queuedAt, timeout: timeout,
            silentSince: inFlight.first.map { max($0.sentAt, lastReadAt) }, deadAfter: deadAfter, healthCheckAt: healthDue)
    }

    /// How long the loop may sleep in `epoll_wait` (milliseconds, rounded up: never early; 0 when
    /// a deadline has passed) until the earliest of its deadlines (`MonotonicClock` nanoseconds):
    /// the oldest command's timeout, the next reconnection, the handshake's end, when a
    /// connection with commands in flight is deemed dead (`silentSince`: the later of the oldest
    /// one's sending and the last reply), or a subscriber's next health check (`checkHealth`).
    /// -1 (until a socket or the wake-up pipe) when there is none: a ready connection with
    /// nothing queued keeps no timer.
    static func waitMilliseconds(
        now: UInt64, phase: Phase, oldestQueuedAt: UInt64?, timeout: UInt64, silentSince: UInt64?, deadAfter: UInt64,
        healthCheckAt: UInt64?
    ) -> Int32 {
        var next: UInt64?
        func earliest(_ deadline: UInt64) { next = min(next ?? deadline, deadline) }
        if let oldestQueuedAt { earliest(oldestQueuedAt &+ timeout) }
        switch phase {
        case .down(let retryAt): earliest(retryAt)
        case .connecting(let deadline): earliest(deadline)
        case .ready: break
        }
        if let silentSince { earliest(silentSince &+ deadAfter) }
        if let healthCheckAt { earliest(healthCheckAt) }
        guard let next else { return -1 }
        guard next > now else { return 0 }
        let (milliseconds, rest) = (next - now).quotientAndRemainder(dividingBy: 1_000_000)
        return Int32(clamping: milliseconds + (rest == 0 ? 0 : 1))
    }

    /// A subscriber's health check (a subscriber has no replies to wait for by which to notice
    /// a paused or silently partitioned server): after `healthInterval` without a byte from the
    /// server, a `PING`; no byte within the timeout after it, the connection is dropped (and
    /// re-established, resubscribed and reconciled like after any loss). Returns when it is
    /// next due, nil when nothing is watched (not a subscriber, or not ready).
    private func checkHealth(_ now: UInt64) -> UInt64? {
        guard subscribedContext, case .ready = phase, let context, !dropping else { return nil }
        if let sent = healthPingSentAt {
            if heardAt > sent {
                healthPingSentAt = nil
            } else if sent &+ timeout <= now {
                drop("no reply to PING within \(options.timeoutMilliseconds) ms")
                return nil
            } else {
                return sent &+ timeout
            }
        }
        guard heardAt &+ healthInterval <= now else { return heardAt &+ healthInterval }
        do throws(RedisError) {
            try RedisCall.check(chttpdns_redis_subscriber_ping(context), "PING (subscriber)", context: context)
        } catch {
            drop(error.message)
            return nil
        }
        healthPingSentAt = now
        // Written now rather than on the next wake-up (the socket has room for 14 bytes); a
        // failed write frees the context, which `cleanup` reports.
        redisAsyncHandleWrite(context)
        return now &+ timeout
    }

    // MARK: Connection

    /// Starts a connection attempt: the context, its hooks, and the handshake queued behind it.
    private func connect() {
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
            try Self.issue(context, arguments.map { Array($0.utf8) }, callback: Self.handshakeReply, privateData: nil)
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
    private func drop(_ reason: String) {
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
            try Self.issue(context, pending.arguments, callback: Self.commandReply, privateData: retained)
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
            try Self.issue(context, (["SUBSCRIBE"] + channels).map { Array($0.utf8) }, callback: Self.subscriptionReply, privateData: nil)
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
        shared.metrics.recordLatency(purpose, nanoseconds: now &- pending.sentAt)
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

    /// Shutting down: fails what is queued, frees the context (failing what is in flight).
    private func finish(_ batch: [RedisWork]) {
        stopping = true
        let error = RedisError(.shutdown, "the \(purpose) Redis connection is shut down")
        for work in batch + shared.queue.close() {
            if case .command(let pending) = work { fail(pending, error) }
        }
        for pending in waiting { fail(pending, error) }
        waiting.removeAll()
        if let context {
            dropReason = "shut down"
            dropping = true
            redisAsyncFree(context)
        }
        shared.up.store(false, ordering: .relaxed)
        shared.metrics.setUp(purpose, false)
        sockets.close()
    }

    // MARK: The socket

    private func handle(_ ready: EpollSet.Readiness) {
        guard ready.fd == watchedFD else { return }
        if ready.readable, subscribedContext { heardAt = MonotonicClock.nanoseconds() }
        if ready.writable || ready.failed, let context, !dropping { redisAsyncHandleWrite(context) }
        if ready.readable || ready.failed, let context, !dropping { redisAsyncHandleRead(context) }
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
