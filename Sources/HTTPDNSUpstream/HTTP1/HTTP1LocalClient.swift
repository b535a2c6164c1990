import HTTPDNSCore
import HTTPDNSLoop

#if canImport(Glibc)
    import Glibc
#endif

/// An ``HTTP1Client`` riding on another component's loop thread (an HTTP server thread): what
/// ``CurlEventLoop/perform(_:completion:)`` is given on that thread runs there, on that thread's
/// own connections to the upstream, instead of crossing to the curl loop's thread and back. A
/// cache miss is then read, sent upstream, answered and written by one thread, woken only by its
/// sockets. A request this client does not serve (https, a host name) goes on to the curl loop.
///
/// Requests are taken into `pending` and started at the host's next turn (``turn(now:)``): a
/// request made from inside one of this client's completions never re-enters it. Confined to the host's thread, where it is registered as the thread's
/// client (``current``) from creation to ``shutdown()``.
final class HTTP1LocalClient: LoopGuest {
    /// The curl loop this client takes requests for, and hands the rest to.
    let owner: CurlLoopShared
    private let client: HTTP1Client
    /// Both read on every turn of the host loop, confined to its thread and never accessed
    /// re-entrantly (a completion appends to `pending` while `starting` is walked): without the
    /// runtime's exclusivity checks.
    @exclusivity(unchecked) private var pending: [PendingTransfer] = []
    /// `pending`'s other buffer: `startPending` swaps the two, so a turn allocates nothing.
    @exclusivity(unchecked) private var starting: [PendingTransfer] = []

    /// Creates the client over `sockets`, the host's epoll set, and registers it as the calling
    /// thread's client: call it on the host's loop thread.
    /// Requests this thread keeps in flight on its own connections at most; more (a large
    /// preload's burst) go through the curl loop, so that the thread's other clients are not
    /// queued behind them and the burst's work spreads over another thread.
    let maximumInFlight: Int

    init(sockets: EpollSet, owner: CurlLoopShared, maximumInFlight: Int) {
        self.owner = owner
        self.maximumInFlight = maximumInFlight
        client = HTTP1Client(
            sockets: sockets, maxConnectionsPerHost: owner.maxConnectionsPerHost, maxIdlePerHost: owner.maxCachedConnections)
        pending.reserveCapacity(64)
        starting.reserveCapacity(64)
        Self.slot.set(self)
    }

    /// The calling thread's client, if a host loop registered one.
    static var current: HTTP1LocalClient? { slot.current }

    private static let slot = ThreadSlot<HTTP1LocalClient>()

    /// Takes `transfer`, to start at the host's next turn: nil when taken, the transfer itself
    /// when `maximumInFlight` requests are taken already (finished ones count until the next turn
    /// drops them).
    func take(_ transfer: consuming PendingTransfer) -> PendingTransfer? {
        guard pending.count + client.transfersHeld < maximumInFlight else { return transfer }
        pending.append(transfer)
        return nil
    }

    /// Whether requests wait for the next turn.
    var hasPending: Bool { !pending.isEmpty }

    var isIdle: Bool { pending.isEmpty && client.isIdle }

    func turn(now: Int64) -> Int64? {
        if !pending.isEmpty { startPending(now: now) }
        client.expire(now: now)
        // Completions of what just started or expired may have asked for more.
        return pending.isEmpty ? client.nextDeadline() : now
    }

    private func startPending(now: Int64) {
        swap(&pending, &starting)
        do {
            // Read in place from a local array: an element of a property, or a `for in`'s, is
            // copied first (a retain of each of its parts, and a release).
            let batch = starting
            for index in batch.indices where !client.start(batch[index], now: now) {
                // Not an address-literal http:// origin: libcurl's, on the curl loop.
                owner.enqueue(batch[index])
            }
        }
        starting.removeAll(keepingCapacity: true)
    }

    func handle(_ ready: EpollSet.Readiness) -> Bool { client.handle(ready) }

    func shutdown() {
        Self.slot.set(nil)
        let error = UpstreamError(.transport, "the HTTP loop carrying this upstream client is shut down")
        let waiting = pending
        pending.removeAll()
        for transfer in waiting { transfer.completion(.failure(error)) }
        client.shutdown(error)
    }
}

@available(*, unavailable)
extension HTTP1LocalClient: Sendable {}
