import HTTPDNSCore
import Synchronization

/// A `CachePersistence` whose `flush` completes only when the test says so: what "durable"
/// means is in the test's hands. Records the upserts made before each flush.
final class ControlledFlushPersistence: CachePersistence {
    private struct State {
        var upserts: [CacheKey] = []
        var pendingFlushes: [@Sendable (FlushOutcome) -> Void] = []
        var flushRequests = 0
    }

    private let state = Mutex(State())

    init() {}

    /// Keys upserted so far, in order.
    var upserts: [CacheKey] { state.withLock { $0.upserts } }

    /// Flushes asked for and not completed yet.
    var pendingFlushCount: Int { state.withLock { $0.pendingFlushes.count } }

    var flushRequests: Int { state.withLock { $0.flushRequests } }

    /// Completes every pending flush with `outcome` (outside the lock); returns how many.
    @discardableResult
    func completeFlushes(_ outcome: FlushOutcome = .durable) -> Int {
        let pending = state.withLock { state -> [@Sendable (FlushOutcome) -> Void] in
            defer { state.pendingFlushes.removeAll() }
            return state.pendingFlushes
        }
        for completion in pending { completion(outcome) }
        return pending.count
    }

    func upsert(account: String, key: CacheKey, entry: CacheEntry) {
        state.withLock { $0.upserts.append(key) }
    }

    func remove(account: String, key: CacheKey) {}

    func removeAll(account: String) {}

    func flush(completion: @escaping @Sendable (FlushOutcome) -> Void) {
        state.withLock {
            $0.flushRequests += 1
            $0.pendingFlushes.append(completion)
        }
    }
}
