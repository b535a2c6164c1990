import Synchronization

/// Counters of one account's engine for `/metrics`. Hot-path counters are atomics; the per-upstream
/// outcome table (touched only when an upstream is asked) sits behind a `Mutex`.
public final class EngineMetrics: Sendable {
    /// Counted on every lookup from every HTTP thread: striped, not one shared atomic.
    public let cacheHits: StripedCounter
    public let cacheMisses: StripedCounter
    /// The same two as the request path counts them (no retain: `StripedCounter.Unretained`).
    let hits: StripedCounter.Unretained
    let misses: StripedCounter.Unretained
    public let negativeHits = Atomic<UInt64>(0)
    public let singleFlightJoined = Atomic<UInt64>(0)
    public let fallbackSuccess = Atomic<UInt64>(0)
    public let fallbackFailure = Atomic<UInt64>(0)
    public let resolveFailures = Atomic<UInt64>(0)
    /// Answers served from an expired entry (reuse of expired IPs, serve-stale on failure).
    public let staleServed = Atomic<UInt64>(0)
    /// Background refreshes started (refresh-ahead, scheduled prefetch, refresh on demand).
    public let prefetches = Atomic<UInt64>(0)
    /// Speed-test runs (one per answer probed) and their probes by outcome.
    public let speedTestRuns = Atomic<UInt64>(0)
    public let speedProbesReachable = Atomic<UInt64>(0)
    public let speedProbesUnreachable = Atomic<UInt64>(0)
    /// Upstream queries not started because the account's `upstreamQPS` budget was spent.
    public let upstreamBudgetRefusals: StripedCounter
    /// Requests refused because their client address was over its rate (`rateLimit`).
    public let clientRateRefusals: StripedCounter
    /// Upstream queries by upstream and outcome, with their durations: a short list (the
    /// account's upstreams times the outcomes seen) searched in place, newest row first. A query
    /// compares two strings that share storage with the row's, where a dictionary hashed both.
    private let upstreamOutcomes = Mutex<[(key: UpstreamOutcomeKey, counts: HistogramCounts)]>([])
    /// Request durations of this account, one slot per label combination the HTTP front numbers
    /// (wire API × answer source; `requestDurationSlots` of them at most), recorded from every
    /// HTTP thread.
    public let requestDurations: DurationHistograms
    /// The same as the request path records them (no retain).
    public let requestDurationRecorder: DurationHistograms.Unretained
    /// Answers given by the account's `rules`, in all and per rule name (names are bounded by
    /// validation: at most 64 of `A-Z a-z 0-9 . _ -`).
    public let ruleAnswers = Atomic<UInt64>(0)
    private let ruleAnswersByName = Mutex<[String: UInt64]>([:])
    /// Durations of preloads (`POST /v1/{account}/preload`), from request to last answer.
    public let preloadDurations = Mutex(HistogramCounts())

    public static let requestDurationSlots = 160

    public init() {
        // One set of stripe lines for the four (1 KB an account, not 4: `StripedCounter.group`).
        let counters = StripedCounter.group(4)
        cacheHits = counters[0]
        cacheMisses = counters[1]
        upstreamBudgetRefusals = counters[2]
        clientRateRefusals = counters[3]
        hits = StripedCounter.Unretained(cacheHits)
        misses = StripedCounter.Unretained(cacheMisses)
        requestDurations = DurationHistograms(slots: Self.requestDurationSlots)
        requestDurationRecorder = DurationHistograms.Unretained(requestDurations)
    }

    public struct UpstreamOutcomeKey: Hashable, Sendable, Comparable {
        public var upstream: String
        /// `success`, `negative`, or an `UpstreamError.Code` in snake case.
        public var outcome: String

        public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.upstream, lhs.outcome) < (rhs.upstream, rhs.outcome) }
    }

    /// Lookups of one host and family: every lookup is a hit or a miss.
    public var resolveRequestCount: UInt64 { cacheHits.value + cacheMisses.value }

    /// The last hour of these counters, a point a minute (`RecentActivity`).
    public let recent = RecentActivity()

    /// The running totals `recent` keeps the differences of: lookups, hits, misses, stale
    /// answers, failed resolutions and upstream queries that failed (not an answer, not a
    /// negative answer).
    public var activityTotals: ActivityCounts {
        let errors = upstreamCounts.reduce(0 as UInt64) { $0 + ($1.0.outcome == "success" || $1.0.outcome == "negative" ? 0 : $1.1) }
        let hits = cacheHits.value, misses = cacheMisses.value
        return ActivityCounts(
            lookups: hits + misses, hits: hits, misses: misses, stale: staleServed.value, failures: resolveFailures.value,
            upstreamErrors: errors)
    }

    /// One upstream query and how long it took (`seconds`).
    public func recordUpstream(name: String, reply: ReplySummary, seconds: Double) {
        let outcome: String
        switch reply {
        case .answered: outcome = reply.isNegative ? "negative" : "success"
        case .failed(let error): outcome = Self.outcomeLabel(error.code)
        }
        upstreamOutcomes.withLock { rows in
            if let index = rows.firstIndex(where: { $0.key.upstream == name && $0.key.outcome == outcome }) {
                rows[index].counts.record(seconds: seconds)
                return
            }
            var counts = HistogramCounts()
            counts.record(seconds: seconds)
            rows.insert((UpstreamOutcomeKey(upstream: name, outcome: outcome), counts), at: 0)
        }
    }

    public var upstreamCounts: [(UpstreamOutcomeKey, UInt64)] {
        upstreamDurations.map { ($0.0, $0.1.count) }
    }

    /// Counts one answer of the rule `name`.
    func countRuleAnswer(_ name: String) {
        ruleAnswers.increment()
        ruleAnswersByName.withLock { $0[name, default: 0] += 1 }
    }

    /// Answers per rule name, sorted by name (rules that never answered are absent).
    public var ruleAnswerCounts: [(String, UInt64)] {
        ruleAnswersByName.withLock { $0.map { ($0.key, $0.value) } }.sorted { $0.0 < $1.0 }
    }

    /// Upstream query durations by upstream and outcome, sorted.
    public var upstreamDurations: [(UpstreamOutcomeKey, HistogramCounts)] {
        upstreamOutcomes.withLock { rows in rows.map { ($0.key, $0.counts) } }.sorted { $0.0 < $1.0 }
    }

    static func outcomeLabel(_ code: UpstreamError.Code) -> String {
        switch code {
        case .timeout: "timeout"
        case .transport: "transport"
        case .permission: "permission"
        case .badRequest: "bad_request"
        case .notFound: "not_found"
        case .httpStatus: "http_status"
        case .malformed: "malformed"
        case .serverFailure: "server_failure"
        }
    }
}

extension Atomic where Value == UInt64 {
    /// Adds one, relaxed: counters need no ordering with other memory.
    @inlinable public func increment() { add(1, ordering: .relaxed) }
    @inlinable public var value: UInt64 { load(ordering: .relaxed) }
}
