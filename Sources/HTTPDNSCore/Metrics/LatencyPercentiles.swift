/// Request latency of a stretch of time: how many requests were timed and their 50th, 95th and
/// 99th percentiles, in seconds, estimated from a duration histogram's observations per bucket
/// (`DurationBuckets`) as Prometheus' `histogram_quantile` estimates them: the bucket the rank
/// falls in, then a straight line between its lower and upper bound (0 below the first). A rank
/// beyond the last bound (10 s) is the last bound. What `RecentActivity` keeps for each minute,
/// from the difference of the account's request-duration histograms between two samples.
public struct LatencyPercentiles: Sendable, Equatable {
    public let requests: UInt64
    public let p50: Double
    public let p95: Double
    public let p99: Double

    public init(requests: UInt64, p50: Double, p95: Double, p99: Double) {
        self.requests = requests
        self.p50 = p50
        self.p95 = p95
        self.p99 = p99
    }

    /// The percentiles of `counts`; nil when it holds no observation.
    public init?(_ counts: HistogramCounts) {
        let total = counts.count
        guard total > 0 else { return nil }
        self.init(
            requests: total, p50: Self.quantile(0.5, counts.buckets, total: total),
            p95: Self.quantile(0.95, counts.buckets, total: total), p99: Self.quantile(0.99, counts.buckets, total: total))
    }

    /// The `q` quantile (0 < q ≤ 1) of `total` observations spread over `buckets`
    /// (`DurationBuckets.count` of them, not cumulative).
    static func quantile(_ q: Double, _ buckets: [UInt64], total: UInt64) -> Double {
        let bounds = DurationBuckets.bounds
        let rank = q * Double(total)
        var below: UInt64 = 0
        for (index, count) in buckets.enumerated() where count > 0 {
            guard Double(below + count) >= rank else {
                below += count
                continue
            }
            guard index < bounds.count else { return bounds[bounds.count - 1] }
            let lower = index == 0 ? 0 : bounds[index - 1]
            return lower + (bounds[index] - lower) * (rank - Double(below)) / Double(count)
        }
        return bounds[bounds.count - 1]
    }
}

extension HistogramCounts {
    /// What was recorded since `earlier`, bucket by bucket (counts only grow; a smaller one
    /// counts as 0).
    public func since(_ earlier: HistogramCounts) -> HistogramCounts {
        var delta = HistogramCounts()
        for index in buckets.indices {
            delta.buckets[index] = buckets[index] >= earlier.buckets[index] ? buckets[index] - earlier.buckets[index] : 0
        }
        delta.sumNanoseconds = sumNanoseconds >= earlier.sumNanoseconds ? sumNanoseconds - earlier.sumNanoseconds : 0
        return delta
    }
}
