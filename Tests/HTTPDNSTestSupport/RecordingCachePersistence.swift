import HTTPDNSCore
import Synchronization

/// A `CachePersistence` that keeps what a store would hold in memory and records every call, so
/// tests can check what the engine asks to persist without SQLite. `flush` completes at once.
public final class RecordingCachePersistence: CachePersistence {
    /// One call the engine made.
    public enum Operation: Sendable, Equatable {
        case upsert(account: String, key: CacheKey, entry: CacheEntry)
        case remove(account: String, key: CacheKey)
        case removeAll(account: String)
    }

    private struct State {
        var operations: [Operation] = []
        var stored: [String: [CacheKey: CacheEntry]] = [:]
        var flushes = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Every call, in order.
    public var operations: [Operation] { state.withLock { $0.operations } }

    /// What a store would hold now for `account`.
    public func stored(account: String) -> [CacheKey: CacheEntry] {
        state.withLock { $0.stored[account] ?? [:] }
    }

    /// How often `flush` was called.
    public var flushCount: Int { state.withLock { $0.flushes } }

    public func upsert(account: String, key: CacheKey, entry: CacheEntry) {
        state.withLock {
            $0.operations.append(.upsert(account: account, key: key, entry: entry))
            $0.stored[account, default: [:]][key] = entry
        }
    }

    public func remove(account: String, key: CacheKey) {
        state.withLock {
            $0.operations.append(.remove(account: account, key: key))
            $0.stored[account]?[key] = nil
        }
    }

    public func removeAll(account: String) {
        state.withLock {
            $0.operations.append(.removeAll(account: account))
            $0.stored[account] = nil
        }
    }

    public func flush(completion: @escaping @Sendable (FlushOutcome) -> Void) {
        state.withLock { $0.flushes += 1 }
        completion(.durable)
    }
}
