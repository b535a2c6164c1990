import HTTPDNSCore

/// How tenant request durations are numbered in each account's `EngineMetrics.requestDurations`:
/// one slot per (tenant route, source), so a slot names its `protocol` (the route's
/// `WireFormat`), `endpoint` (its path) and `source` labels.
enum RequestDurations {
    /// The `source` label: what answered (`AnswerSource`), or `none` for a request that looked
    /// nothing up (a refusal, a cache listing, statistics).
    static let sources = ["cache", "upstream", "stale", "localdns", "none", "shared", "rule"]

    static func slot(_ route: Route, source: AnswerSource?) -> Int {
        route.tenantIndex! * sources.count + sourceIndex(source)
    }

    static func sourceIndex(_ source: AnswerSource?) -> Int {
        switch source {
        case .cache: 0
        case .upstream: 1
        case .stale: 2
        case .localdns: 3
        case nil: 4
        case .shared: 5
        case .rule: 6
        }
    }

    /// The label values of a slot (without `account`): `protocol`, `endpoint`, `source`. Two routes of
    /// one path and format (its methods) share labels; the exposition sums them.
    static func labels(slot: Int, table: RouteTable = .standard) -> [String] {
        let route = table.tenantRoutes[slot / sources.count]
        return [route.format.rawValue, route.path, sources[slot % sources.count]]
    }

    /// Slots in use: every tenant route times every source.
    static func slotCount(table: RouteTable = .standard) -> Int { table.tenantRoutes.count * sources.count }
}

extension AnswerSource {
    /// The source of a response made of several answers: the least direct one (local DNS, then
    /// stale, then upstream, then shared, then cache or rule); a failure counts as upstream (the upstreams
    /// were asked).
    static func combined(_ outcomes: [FamilyOutcome]) -> AnswerSource {
        var rank = 0
        for outcome in outcomes {
            switch outcome {
            case .success(let answer):
                switch answer.source {
                case .cache, .rule: break
                case .shared: rank = max(rank, 1)
                case .upstream: rank = max(rank, 2)
                case .stale: rank = max(rank, 3)
                case .localdns: rank = max(rank, 4)
                }
            case .failure: rank = max(rank, 2)
            }
        }
        return [.cache, .shared, .upstream, .stale, .localdns][rank]
    }
}

extension EngineMetrics {
    /// The durations of the account's requests that looked a name up (every source but `none`:
    /// not refusals, statistics, cache listings), summed over routes; nil while none was timed.
    /// What the last hour's latency percentiles are taken from (`RecentActivity`): read once a
    /// minute by the sampler and by `GET /v1/{account}/stats/recent`, never on the lookup path.
    public var lookupDurations: HistogramCounts? {
        guard requestDurations.hasSlotTable else { return nil }
        let none = RequestDurations.sourceIndex(nil)
        var total: HistogramCounts?
        for slot in 0..<RequestDurations.slotCount() where slot % RequestDurations.sources.count != none {
            guard let counts = requestDurations.counts(slot) else { continue }
            if total == nil { total = counts } else { total!.add(counts) }
        }
        return total
    }
}
