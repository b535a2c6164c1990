import CHiredis
import HTTPDNSCore

/// The worker's deadlines: command timeouts, reconnection, the handshake's limit, a dead
/// connection, a subscriber's health check, and how long the loop may wait until the next.
extension RedisLoopWorker {
    /// Expires commands, drops a dead connection, starts a due reconnection. Returns how many
    /// milliseconds the loop may wait before the next of these is due: -1 (until a socket or the
    /// wake-up pipe) when none is, so that an idle connection's thread sleeps.
    func tick() -> Int32 {
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
}
