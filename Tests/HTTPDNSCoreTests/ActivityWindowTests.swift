import HTTPDNSCore
import Testing

/// An account's last hour (`ActivityWindow`): a point per sample, what the totals moved by.
@Suite struct ActivityWindowTests {
    @Test func eachSampleAddsWhatTheTotalsMovedByAndTheMinuteInProgressIsRead() {
        var window = ActivityWindow()
        window.sample(ActivityCounts(lookups: 10, hits: 8, misses: 2), at: 1000)
        window.sample(ActivityCounts(lookups: 25, hits: 20, misses: 5, upstreamErrors: 1), at: 1060)
        let points = window.points(now: 1090, totals: ActivityCounts(lookups: 28, hits: 23, misses: 5, upstreamErrors: 1))
        #expect(
            points == [
                ActivityPoint(start: 1000, seconds: 60, counts: ActivityCounts(lookups: 15, hits: 12, misses: 3, upstreamErrors: 1)),
                ActivityPoint(start: 1060, seconds: 30, counts: ActivityCounts(lookups: 3, hits: 3)),
            ])
    }

    @Test func anAccountThatLooksNothingUpKeepsNoPoints() {
        var window = ActivityWindow()
        for minute in 0..<10 { window.sample(ActivityCounts(lookups: 7, hits: 7), at: Double(minute * 60)) }
        #expect(window.points(now: 600, totals: ActivityCounts(lookups: 7, hits: 7)).count == 1)
        #expect(window.points(now: 600, totals: ActivityCounts(lookups: 7, hits: 7))[0].counts == ActivityCounts())
    }

    @Test func pointsOlderThanAnHourAreDroppedAndAnIdleHourFreesThemAll() {
        var window = ActivityWindow()
        var totals = ActivityCounts()
        for minute in 0...90 {
            if minute <= 45 { totals.lookups += 2; totals.hits += 1; totals.misses += 1 }
            window.sample(totals, at: Double(minute * 60))
        }
        let points = window.points(now: 90 * 60, totals: totals)
        #expect(points.first!.start >= 30 * 60)
        #expect(points.count == 60)
        #expect(points.reduce(0) { $0 + $1.counts.lookups } == 2 * 15)
        for minute in 91...160 { window.sample(totals, at: Double(minute * 60)) }
        #expect(window.points(now: 160 * 60, totals: totals).isEmpty)
    }

    @Test func aTotalThatWentBackCountsAsNothing() {
        var window = ActivityWindow()
        window.sample(ActivityCounts(lookups: 10), at: 0)
        window.sample(ActivityCounts(lookups: 4), at: 60)
        #expect(window.points(now: 60, totals: ActivityCounts(lookups: 4)).isEmpty)
    }
}

extension ActivityWindowTests {
    /// Each point carries the percentiles of the requests timed in it, the minute in progress too.
    @Test func eachPointHasTheLatencyOfTheRequestsTimedInIt() throws {
        func histogram(_ seconds: Double, _ count: Int) -> HistogramCounts {
            var counts = HistogramCounts()
            for _ in 0..<count { counts.record(seconds: seconds) }
            return counts
        }
        var window = ActivityWindow()
        window.sample(ActivityCounts(), at: 0)
        var durations = histogram(0.003, 10)
        window.sample(ActivityCounts(lookups: 10, hits: 10), durations: durations, at: 60)
        durations.add(histogram(0.04, 4))
        let points = window.points(now: 90, totals: ActivityCounts(lookups: 14, hits: 14), durations: durations)
        #expect(points.map { $0.latency?.requests } == [10, 4])
        let first = try #require(points[0].latency), second = try #require(points[1].latency)
        #expect(first.p99 > 0.0025 && first.p99 <= 0.005)
        #expect(second.p50 > 0.025 && second.p50 <= 0.05)
        // The next minute, a lookup the HTTP front did not time (plain DNS): no latency.
        window.sample(ActivityCounts(lookups: 14, hits: 14), durations: durations, at: 120)
        window.sample(ActivityCounts(lookups: 15, hits: 15), durations: durations, at: 180)
        let hour = window.points(now: 180, totals: ActivityCounts(lookups: 15, hits: 15), durations: durations)
        #expect(hour.map { $0.latency?.requests } == [10, 4, nil])
    }
}
