import Synchronization

/// An account's budget of upstream queries per second (`upstreamQPS`): a `TokenBucket` of one
/// second's worth of queries (at least one) behind a lock, read with the engine's clock. The rate
/// is passed on each call, so a configuration update applies at the next query.
///
/// Threads: any. Called once per upstream query started (never on a cache hit).
public final class UpstreamBudget: Sendable {
    private let bucket = Mutex(TokenBucket())

    public init() {}

    /// Takes one query from the budget at `now`; `queriesPerSecond` > 0.
    public func take(at now: Timestamp, queriesPerSecond: Double) -> TokenBucket.Decision {
        let burst = max(1, queriesPerSecond)
        return bucket.withLock { $0.take(at: now, rate: queriesPerSecond, burst: burst) }
    }
}
