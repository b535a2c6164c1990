import HTTPDNSCore
import Synchronization

/// Responses by status code, for `httpdns_http_requests_total{code=...}`. Every response counts
/// here from every HTTP thread, so the common statuses have striped counters (no shared lock,
/// no shared cache line); the rest share one.
public final class HTTPMetrics: Sendable {
    /// The statuses this service answers with; others are counted under `other`.
    private static let common = [200, 201, 202, 400, 401, 403, 404, 405, 413, 429, 431, 500, 502, 503, 504]
    private let counters: [StripedCounter] = common.map { _ in StripedCounter() }
    /// The same, as `record` reaches them (no retain: `StripedCounter.Unretained`).
    private let unretained: [StripedCounter.Unretained]
    private let otherStatuses = Mutex<[Int: UInt64]>([:])

    public init() {
        unretained = counters.map(StripedCounter.Unretained.init)
    }

    public func record(status: Int) {
        if let index = Self.common.firstIndex(of: status) {
            unretained[index].increment()
        } else if (100...599).contains(status) {
            otherStatuses.withLock { $0[status, default: 0] += 1 }
        }
    }

    /// Non-zero counters by status, sorted.
    public var snapshot: [(Int, UInt64)] {
        var values = otherStatuses.withLock { $0 }
        for (index, status) in Self.common.enumerated() {
            let value = counters[index].value
            if value > 0 { values[status] = value }
        }
        return values.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
