import Synchronization

/// Responses by status code, for `httpdns_http_requests_total{code=...}`. One atomic counter per
/// status: every response counts here, from every HTTP thread, so there is no lock to share.
public final class HTTPMetrics: @unchecked Sendable {
    /// Counters for status 100...599, indexed by `status - 100`; allocated once, never moved.
    private let counts: UnsafeMutablePointer<Atomic<UInt64>>
    private static let range = 100...599

    public init() {
        counts = .allocate(capacity: Self.range.count)
        for index in 0..<Self.range.count { (counts + index).initialize(to: Atomic(0)) }
    }

    deinit {
        counts.deinitialize(count: Self.range.count)
        counts.deallocate()
    }

    public func record(status: Int) {
        guard Self.range.contains(status) else { return }
        counts[status - 100].add(1, ordering: .relaxed)
    }

    /// Non-zero counters by status.
    public var snapshot: [(Int, UInt64)] {
        Self.range.compactMap { status in
            let value = counts[status - 100].load(ordering: .relaxed)
            return value == 0 ? nil : (status, value)
        }
    }
}
