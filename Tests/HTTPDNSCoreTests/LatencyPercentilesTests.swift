import Testing

@testable import HTTPDNSCore

/// The latency percentiles of a stretch of time, from the bucket differences of a duration
/// histogram (`LatencyPercentiles`), as Prometheus' `histogram_quantile` estimates them.
@Suite struct LatencyPercentilesTests {
    /// A histogram of `durations` (seconds).
    private static func histogram(_ durations: [Double]) -> HistogramCounts {
        var counts = HistogramCounts()
        for duration in durations { counts.record(seconds: duration) }
        return counts
    }

    @Test func aRankIsInterpolatedInsideTheBucketItFallsIn() throws {
        // 100 requests: 90 in (0.5 ms, 1 ms], 9 in (5 ms, 10 ms], 1 in (100 ms, 250 ms].
        let counts = Self.histogram(Array(repeating: 0.0008, count: 90) + Array(repeating: 0.008, count: 9) + [0.2])
        let latency = try #require(LatencyPercentiles(counts))
        #expect(latency.requests == 100)
        // Rank 50 of the bucket's 90, from 0.5 ms to 1 ms.
        #expect(abs(latency.p50 - (0.0005 + 0.0005 * 50 / 90)) < 1e-12)
        // Rank 95: the 5th of the 9 in (5 ms, 10 ms].
        #expect(abs(latency.p95 - (0.005 + 0.005 * 5 / 9)) < 1e-12)
        // Rank 99: the last of those 9, the bucket's upper bound.
        #expect(abs(latency.p99 - 0.01) < 1e-12)
    }

    @Test func theFirstBucketStartsAtZeroAndBeyondTheLastBoundIsTheLastBound() throws {
        let fast = try #require(LatencyPercentiles(Self.histogram([0.00001, 0.00002])))
        #expect(abs(fast.p50 - 0.00005) < 1e-12)
        let slow = try #require(LatencyPercentiles(Self.histogram([20, 30, 40])))
        #expect(slow.p50 == 10 && slow.p99 == 10)
    }

    @Test func nothingTimedHasNoPercentiles() {
        #expect(LatencyPercentiles(HistogramCounts()) == nil)
    }

    @Test func aStretchTakesTheBucketDifferencesOfTwoReadings() throws {
        let before = Self.histogram(Array(repeating: 2.0, count: 1000))
        var after = before
        after.add(Self.histogram(Array(repeating: 0.0002, count: 10)))
        let delta = after.since(before)
        #expect(delta.count == 10)
        #expect(delta.buckets[1] == 10)
        let latency = try #require(LatencyPercentiles(delta))
        #expect(latency.p99 <= 0.00025, "the slow requests before the stretch are not in it")
        #expect(before.since(after).count == 0, "a total that went back counts as nothing")
    }
}
