import Synchronization

/// Responses by status code, for `httpdns_http_requests_total{code=...}`.
public final class HTTPMetrics: Sendable {
    /// Counters for status 100...599, indexed by `status - 100`.
    private let counts = Mutex<[UInt64]>(Array(repeating: 0, count: 500))

    public init() {}

    public func record(status: Int) {
        guard (100...599).contains(status) else { return }
        counts.withLock { $0[status - 100] += 1 }
    }

    /// Non-zero counters by status.
    public var snapshot: [(Int, UInt64)] {
        let values = counts.withLock { $0 }
        return values.indices.compactMap { index in values[index] == 0 ? nil : (index + 100, values[index]) }
    }
}
