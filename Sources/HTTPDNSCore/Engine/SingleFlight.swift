import Synchronization

/// At most one resolution in flight per key: the first caller starts the work, later callers for
/// the same key wait for its result. Waiters are called outside the lock, each exactly once.
public final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    public typealias Waiter = @Sendable (Value) -> Void

    private let flights = Mutex<[Key: [Waiter]]>([:])

    public init() {}

    /// Registers `waiter` for `key`. Returns true when the caller is the leader and must start
    /// the work (and later call `complete`), false when it joined a flight already running.
    public func join(_ key: Key, waiter: @escaping Waiter) -> Bool {
        flights.withLock { table in
            if table[key] != nil {
                table[key]!.append(waiter)
                return false
            }
            table[key] = [waiter]
            return true
        }
    }

    /// Starts a flight for `key` with `waiter` only if none is running; returns whether it did.
    /// Unlike `join`, a caller that finds a flight running is not added to it.
    public func startIfIdle(_ key: Key, waiter: @escaping Waiter) -> Bool {
        flights.withLock { table in
            guard table[key] == nil else { return false }
            table[key] = [waiter]
            return true
        }
    }

    /// Ends the flight for `key` and hands `value` to every waiter.
    public func complete(_ key: Key, with value: Value) {
        let waiters = flights.withLock { $0.removeValue(forKey: key) } ?? []
        for waiter in waiters { waiter(value) }
    }

    public var inFlight: Int { flights.withLock { $0.count } }
}
