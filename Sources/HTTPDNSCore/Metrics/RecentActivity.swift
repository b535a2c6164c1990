import Synchronization

/// An account's lookups counted over a stretch of time: what `RecentActivity` keeps a point of.
public struct ActivityCounts: Sendable, Equatable {
    public var lookups: UInt64 = 0
    public var hits: UInt64 = 0
    public var misses: UInt64 = 0
    public var stale: UInt64 = 0
    public var failures: UInt64 = 0
    public var upstreamErrors: UInt64 = 0

    public init(
        lookups: UInt64 = 0, hits: UInt64 = 0, misses: UInt64 = 0, stale: UInt64 = 0, failures: UInt64 = 0, upstreamErrors: UInt64 = 0
    ) {
        self.lookups = lookups
        self.hits = hits
        self.misses = misses
        self.stale = stale
        self.failures = failures
        self.upstreamErrors = upstreamErrors
    }

    /// What was counted since `earlier` (totals only grow; a smaller one counts as 0).
    func since(_ earlier: ActivityCounts) -> ActivityCounts {
        func delta(_ now: UInt64, _ then: UInt64) -> UInt64 { now >= then ? now - then : 0 }
        return ActivityCounts(
            lookups: delta(lookups, earlier.lookups), hits: delta(hits, earlier.hits), misses: delta(misses, earlier.misses),
            stale: delta(stale, earlier.stale), failures: delta(failures, earlier.failures),
            upstreamErrors: delta(upstreamErrors, earlier.upstreamErrors))
    }
}

/// The counts of one stretch of time: from `start`, `seconds` long, and the latency of the
/// requests timed in it (nil when none was).
public struct ActivityPoint: Sendable, Equatable {
    public let start: Timestamp
    public let seconds: Double
    public let counts: ActivityCounts
    public let latency: LatencyPercentiles?

    public init(start: Timestamp, seconds: Double, counts: ActivityCounts, latency: LatencyPercentiles? = nil) {
        self.start = start
        self.seconds = seconds
        self.counts = counts
        self.latency = latency
    }
}

/// The last hour of an account, a point per sample (a minute apart, `ActivitySampler`): the
/// difference of the account's running totals between two samples, and the latency percentiles
/// of the difference of its request-duration histogram (a point keeps the three figures, not the
/// buckets). No clock of its own; an account that never looked anything up keeps no points (no
/// array is allocated).
public struct ActivityWindow: Sendable {
    /// How far back points are kept, seconds.
    public static let span: Double = 3600
    private(set) var points: [ActivityPoint] = []
    private var last: (time: Timestamp, totals: ActivityCounts, durations: HistogramCounts?)?

    public init() {}

    /// Takes the account's running `totals` and request `durations` (the histogram summed since
    /// the start; nil while nothing was timed, which keeps an idle account's window without an
    /// array) at `now`: the point since the previous sample.
    public mutating func sample(_ totals: ActivityCounts, durations: HistogramCounts? = nil, at now: Timestamp) {
        defer { last = (now, totals, durations) }
        guard let last, now > last.time else { return }
        let counts = totals.since(last.totals)
        if points.isEmpty && counts == ActivityCounts() { return }
        points.append(
            ActivityPoint(
                start: last.time, seconds: now - last.time, counts: counts,
                latency: Self.latency(durations, since: last.durations)))
        points.removeAll { $0.start < now - Self.span }
        // An hour without a lookup: the account keeps nothing again.
        if points.allSatisfy({ $0.counts == ActivityCounts() }) { points = [] }
    }

    /// The points of the last hour, then the stretch since the last sample (at `now`, with
    /// `totals` and `durations`): the reader sees the minute in progress too.
    public func points(now: Timestamp, totals: ActivityCounts, durations: HistogramCounts? = nil) -> [ActivityPoint] {
        var all = points.filter { $0.start >= now - Self.span }
        if let last, now > last.time {
            all.append(
                ActivityPoint(
                    start: last.time, seconds: now - last.time, counts: totals.since(last.totals),
                    latency: Self.latency(durations, since: last.durations)))
        }
        return all
    }

    /// The percentiles of what was timed between the histograms `earlier` and `now`.
    static func latency(_ now: HistogramCounts?, since earlier: HistogramCounts?) -> LatencyPercentiles? {
        guard let now else { return nil }
        return LatencyPercentiles(earlier.map { now.since($0) } ?? now)
    }
}

/// `ActivityWindow` behind a lock: one per account (`EngineMetrics.recent`), sampled by the
/// daemon's timer and read by `GET /v1/{account}/stats/recent`. Nothing on the lookup path.
public final class RecentActivity: Sendable {
    private let locked_window = Mutex(ActivityWindow())

    public init() {}

    public func sample(_ totals: ActivityCounts, durations: HistogramCounts? = nil, at now: Timestamp) {
        locked_window.withLock { $0.sample(totals, durations: durations, at: now) }
    }

    public func points(now: Timestamp, totals: ActivityCounts, durations: HistogramCounts? = nil) -> [ActivityPoint] {
        locked_window.withLock { $0.points(now: now, totals: totals, durations: durations) }
    }
}
