import HTTPDNSCore
import Synchronization

/// Which accounts had traffic in the last scrape interval, for `metricsAccounts: active`: each
/// scrape compares an account's lookup count (`EngineMetrics.resolveRequestCount`) with the one
/// the previous scrape saw. With several scrapers the interval is the time since any of them.
final class MetricsActivity: Sendable {
    private let locked_seen = Mutex<[String: UInt64]>([:])

    /// The engines with lookups since the previous call (on the first call, since they started),
    /// in the order given; remembers the counts for the next call and forgets removed accounts.
    func active(_ engines: [ResolverEngine]) -> [ResolverEngine] {
        let counts = engines.map { ($0.accountID, $0.metrics.resolveRequestCount) }
        return locked_seen.withLock { seen in
            var next: [String: UInt64] = [:]
            var active: [ResolverEngine] = []
            for (engine, (id, count)) in zip(engines, counts) {
                if count != seen[id] ?? 0 { active.append(engine) }
                next[id] = count
            }
            seen = next
            return active
        }
    }
}
