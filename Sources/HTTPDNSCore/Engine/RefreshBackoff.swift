import Synchronization

/// Remembers keys whose last resolution failed, so that a dead upstream is retried with
/// exponential backoff instead of on every request (no refresh storms). Until a key succeeds
/// again, its requests are answered from the stale entry, if one may be served, and the retries
/// run in the background when they are due.
///
/// Bounded: past `capacity` keys, the ones whose wait is over are dropped first, then half of
/// the rest. The engine records only keys that have a cached entry.
public final class RefreshBackoff: Sendable {
    struct State: Sendable {
        var failures: Int
        var retryAt: Timestamp
    }

    /// First wait after a failure, seconds; it doubles with every further failure.
    public let base: Double
    /// Longest wait, seconds.
    public let cap: Double
    public let capacity: Int
    private let schedule: ExponentialBackoff
    private let table = Mutex<[CacheKey: State]>([:])

    public init(base: Double = 5, cap: Double = 60, capacity: Int = 100_000) {
        self.base = base
        self.cap = cap
        self.capacity = capacity
        schedule = ExponentialBackoff(initial: base, maximum: cap)
    }

    /// True while `key` failed recently and its next attempt is not due yet.
    public func isWaiting(_ key: CacheKey, at now: Timestamp) -> Bool {
        table.withLock { $0[key].map { now < $0.retryAt } ?? false }
    }

    /// True when the last resolution of `key` failed (whether or not its retry is due).
    public func hasFailed(_ key: CacheKey) -> Bool {
        table.withLock { $0[key] != nil }
    }

    /// Counts a failed resolution of `key`; returns how long until it may be tried again.
    @discardableResult
    public func recordFailure(_ key: CacheKey, at now: Timestamp) -> Double {
        table.withLock { table in
            let failures = (table[key]?.failures ?? 0) + 1
            let wait = schedule.delay(afterFailures: failures)
            if table[key] == nil && table.count >= capacity { Self.shrink(&table, now: now, capacity: capacity) }
            table[key] = State(failures: failures, retryAt: now + wait)
            return wait
        }
    }

    /// Forgets `key` after a successful resolution. Every answer from upstream calls this, and
    /// the table is empty while the upstreams answer: then no key is looked up.
    public func clear(_ key: CacheKey) {
        table.withLock { table in
            guard !table.isEmpty else { return }
            table.removeValue(forKey: key)
        }
    }

    /// Forgets every key (new upstreams deserve a fresh start).
    public func clearAll() {
        table.withLock { $0.removeAll() }
    }

    public var count: Int { table.withLock { $0.count } }

    /// Drops the keys whose wait is over and, if that is not enough, half of the table, so that
    /// a flood of failing names costs amortised O(1) per failure.
    private static func shrink(_ table: inout [CacheKey: State], now: Timestamp, capacity: Int) {
        table = table.filter { now < $0.value.retryAt }
        guard table.count >= capacity else { return }
        for key in table.keys.prefix(table.count - capacity / 2) { table.removeValue(forKey: key) }
    }
}
