import Synchronization

/// An account's budget of upstream queries per second (`upstreamQPS`), shared fairly among the
/// clients asking: a `FairBudget` behind a lock, read with the engine's clock. The rate is
/// passed on each call, so a configuration update applies at the next query.
///
/// Threads: any. Called once per upstream query started (never on a cache hit).
public final class UpstreamBudget: Sendable {
    private let budget = Mutex(FairBudget())

    public init() {}

    /// Takes one query from the budget at `now` for `client` (nil: the service's own work, such
    /// as a preload or a background refresh); `queriesPerSecond` > 0.
    public func take(for client: ClientID?, at now: Timestamp, queriesPerSecond: Double) -> TokenBucket.Decision {
        budget.withLock { $0.take(for: client, at: now, rate: queriesPerSecond) }
    }
}
