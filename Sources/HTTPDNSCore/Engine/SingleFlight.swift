import Synchronization

/// At most one resolution in flight per cache key: the first caller starts the work, later
/// callers for the same key wait for its result. Waiters are called outside the lock, each
/// exactly once.
///
/// Not generic over key and value: a closure kept in storage of a generic type is kept at the
/// generic type's abstraction, and converting each waiter to it allocates a thunk.
public final class SingleFlight: Sendable {
    public typealias Waiter = @Sendable (FamilyOutcome) -> Void

    /// A flight's waiters: the first kept inline (most flights have one), the rest in an array
    /// allocated only for them; `clients` of them came through `join`.
    private struct Waiters {
        let first: Waiter
        var more: [Waiter] = []
        var clients: Int
    }

    private let flights = Mutex<[CacheKey: Waiters]>([:])

    public init() {}

    /// Registers `waiter` for `key`. Returns true when the caller is the leader and must start
    /// the work (and later call `complete`), false when it joined a flight already running.
    public func join(_ key: CacheKey, waiter: @escaping Waiter) -> Bool {
        flights.withLock { table in
            if table[key] != nil {
                table[key]!.more.append(waiter)
                table[key]!.clients += 1
                return false
            }
            table[key] = Waiters(first: waiter, clients: 1)
            return true
        }
    }

    /// Starts a flight for `key` with `waiter` only if none is running; returns whether it did.
    /// Unlike `join`, a caller that finds a flight running is not added to it.
    public func startIfIdle(_ key: CacheKey, waiter: @escaping Waiter) -> Bool {
        flights.withLock { table in
            guard table[key] == nil else { return false }
            table[key] = Waiters(first: waiter, clients: 0)
            return true
        }
    }

    /// Ends the flight for `key` and hands `value` to every waiter. `served` is told first how
    /// many of them joined through `join` (the clients the value answers), when there are any.
    public func complete(_ key: CacheKey, with value: FamilyOutcome, served: (_ clients: Int) -> Void = { _ in }) {
        guard let waiters = flights.withLock({ $0.removeValue(forKey: key) }) else { return }
        if waiters.clients > 0 { served(waiters.clients) }
        waiters.first(value)
        for waiter in waiters.more { waiter(value) }
    }

    public var inFlight: Int { flights.withLock { $0.count } }
}
