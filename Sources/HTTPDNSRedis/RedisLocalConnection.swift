import HTTPDNSCore
import HTTPDNSLoop

/// A second connection of one ``RedisConnection`` that rides on another component's loop thread
/// (an HTTP server thread): from its creation until its host's `shutdown()`, a command given to
/// that `RedisConnection` on this thread is sent on this thread's own connection and its reply is
/// read and completed here, instead of crossing to the connection's thread and back (two
/// hand-offs, each a wake-up, for every shared-tier lookup of a miss).
///
/// Its worker is the connection's own: the same handshake, deadlines, reconnection with backoff
/// and dead-connection check. It takes commands only while its handshake is done; while it is
/// down or connecting they go to the connection's own thread, which behaves as it always has.
/// Its state is not the connection's (`up`, `httpdns_redis_up`, `onStateChange` stay the
/// connection's thread's): it is counted in `httpdns_redis_thread_connections` and logged at
/// debug level, since the thread's connection and this one reach the same server.
///
/// Commands are taken into `pending` and sent at the host's next turn (``turn(now:)``): a command
/// given from inside one of this connection's completions never re-enters hiredis. Confined to
/// the host's thread, where it is registered as the thread's local connection (``current``).
final class RedisLocalConnection: LoopGuest {
    /// The connection this one takes commands for.
    let owner: RedisLoopShared
    private let worker: RedisLoopWorker
    /// Read on every turn of the host loop, confined to its thread and never accessed
    /// re-entrantly (a completion appends to `pending` while `starting` is walked).
    @exclusivity(unchecked) private var pending: [RedisWork] = []
    /// `pending`'s other buffer: a turn swaps the two, so it allocates nothing.
    @exclusivity(unchecked) private var starting: [RedisWork] = []

    /// Creates the connection over `sockets`, the host's epoll set, starts connecting, and
    /// registers it as the calling thread's: call it on the host's loop thread.
    init(sockets: EpollSet, owner: RedisLoopShared, options: RedisConnection.Options) {
        self.owner = owner
        worker = RedisLoopWorker(shared: owner, options: options, onStateChange: nil, hostSockets: sockets)
        pending.reserveCapacity(64)
        starting.reserveCapacity(64)
        owner.metrics.addThreadConnection(owner.purpose)
        worker.connect()
        Self.slot.set(self)
    }

    /// The calling thread's local connection, if a host loop registered one.
    static var current: RedisLocalConnection? { slot.current }

    private static let slot = ThreadSlot<RedisLocalConnection>()

    /// Takes `command`, to send at the host's next turn; false while the connection is not ready
    /// (the caller gives it to the connection's own thread).
    func take(_ command: PendingCommand) -> Bool {
        guard isReady else { return false }
        pending.append(.command(command))
        return true
    }

    /// Whether it takes commands now (its handshake is done).
    var isReady: Bool { worker.isReady }

    var isIdle: Bool { pending.isEmpty && worker.isIdle }

    var hasPending: Bool { !pending.isEmpty }

    func turn(now: Int64) -> Int64? {
        swap(&pending, &starting)
        let wait = worker.turn(starting)
        starting.removeAll(keepingCapacity: true)
        // Completions run by this turn (a timeout's, a failed send's) may have given more.
        if !pending.isEmpty { return now }
        return wait < 0 ? nil : now + Int64(wait)
    }

    func handle(_ ready: EpollSet.Readiness) -> Bool { worker.handle(ready) }

    func shutdown() {
        Self.slot.set(nil)
        let waiting = pending
        pending.removeAll()
        worker.stop(failing: waiting)
        owner.metrics.removeThreadConnection(owner.purpose, wasUp: worker.isReportedUp)
    }
}

@available(*, unavailable)
extension RedisLocalConnection: Sendable {}
