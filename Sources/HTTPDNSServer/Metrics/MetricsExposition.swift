import HTTPDNSCore

/// The families `/metrics` shows of the engines and the HTTP front, written through
/// `MetricsEmitter`.
enum MetricsExposition {
    static let httpRequests = MetricDescriptor(
        "httpdns_http_requests_total", .counter, help: "HTTP responses by endpoint (route path, other when none matched) and status code.",
        labels: ["endpoint", "code"])
    static let requestDurations = MetricDescriptor(
        "httpdns_request_duration_seconds", .histogram,
        help:
            "Tenant API requests, from routing to the response ready, by wire API (protocol), endpoint and what answered (source: cache, upstream, stale, localdns, none for requests that looked nothing up).",
        labels: ["account", "protocol", "endpoint", "source"])
    static let resolveRequests = MetricDescriptor(
        "httpdns_resolve_requests_total", .counter, help: "Lookups of one host and family.", labels: ["account"])
    static let cacheHits = MetricDescriptor(
        "httpdns_cache_hits_total", .counter, help: "Lookups answered from the cache.", labels: ["account"])
    static let cacheMisses = MetricDescriptor(
        "httpdns_cache_misses_total", .counter, help: "Lookups the cache could not answer.", labels: ["account"])
    static let negativeHits = MetricDescriptor(
        "httpdns_cache_negative_hits_total", .counter, help: "Cache hits on negative (NXDOMAIN/NODATA) answers.", labels: ["account"])
    static let singleFlightJoined = MetricDescriptor(
        "httpdns_singleflight_joined_total", .counter, help: "Misses that joined a resolution already in flight.", labels: ["account"])
    static let resolveFailures = MetricDescriptor(
        "httpdns_resolve_failures_total", .counter, help: "Resolutions where no upstream nor the fallback answered.", labels: ["account"])
    static let staleServed = MetricDescriptor(
        "httpdns_cache_served_stale_total", .counter,
        help: "Answers served from an expired entry (reuse of expired IPs, or serve-stale when resolution failed).", labels: ["account"])
    static let prefetches = MetricDescriptor(
        "httpdns_prefetch_total", .counter,
        help: "Background refreshes started before clients needed them (refresh-ahead, scheduled prefetch, refresh on demand).",
        labels: ["account"])
    static let speedTestRuns = MetricDescriptor(
        "httpdns_speedtest_runs_total", .counter, help: "Answers whose addresses were probed by the connection speed test.",
        labels: ["account"])
    static let speedTestProbes = MetricDescriptor(
        "httpdns_speedtest_probes_total", .counter, help: "Speed-test probes of one address, by result.", labels: ["account", "result"])
    static let upstreamRequests = MetricDescriptor(
        "httpdns_upstream_requests_total", .counter, help: "Queries sent to upstreams, by outcome.",
        labels: ["account", "upstream", "outcome"])
    static let upstreamDurations = MetricDescriptor(
        "httpdns_upstream_request_duration_seconds", .histogram,
        help: "Queries sent to upstreams, by upstream and outcome, from sending to the answer or the failure.",
        labels: ["account", "upstream", "outcome"])
    static let preloadDurations = MetricDescriptor(
        "httpdns_preload_duration_seconds", .histogram,
        help: "Preloads (POST /v1/{account}/preload), from the request to the last resolution.",
        labels: ["account"])
    static let fallback = MetricDescriptor(
        "httpdns_fallback_total", .counter, help: "Resolutions that fell back to the system resolver, by outcome.",
        labels: ["account", "outcome"])
    static let rateLimited = MetricDescriptor(
        "httpdns_rate_limited_total", .counter,
        help:
            "Requests refused (429) by the client rate limit (reason client_rate), and upstream queries not started because the account's upstream budget was spent (reason upstream_budget).",
        labels: ["account", "reason"])
    static let ruleAnswers = MetricDescriptor(
        "httpdns_rule_answers_total", .counter, help: "Answers given by the account's rules rather than resolved.", labels: ["account"])
    static let ruleAnswersByRule = MetricDescriptor(
        "httpdns_rule_answers_by_rule_total", .counter,
        help: "Answers given by each rule (per account only, on the operations listener: rule names are tenant text).",
        labels: ["account", "rule"])
    static let cacheEntries = MetricDescriptor(
        "httpdns_cache_entries", .gauge, help: "Entries in the cache.", labels: ["account"])
    static let statsDropped = MetricDescriptor(
        "httpdns_stats_dropped_events_total", .counter,
        help: "Statistics events dropped because the per-account record limit was reached.", labels: ["account"])

    /// Everything `/metrics` shows of the engines and the HTTP front. Every family has its totals
    /// without an `account` label; the engines in `perAccount` (the operations listener's choice
    /// under `metricsAccounts`; none on the public listener, where account ids would tell an
    /// attacker the tenants' names) add their own series labelled `account`, so a total is
    /// `x{account=""}` and a per-account graph `x{account!=""}`. `unknownAccountRefusals` and
    /// `unknownAccountDurations` are of requests to no known account (in the totals only).
    static func emit(
        into out: inout MetricsEmitter, engines: [ResolverEngine], http: HTTPMetrics?, perAccount: [ResolverEngine],
        unknownAccountRefusals: UInt64 = 0, unknownAccountDurations: DurationHistograms? = nil
    ) {
        let families = EngineFamilies(engines: engines, perAccount: perAccount)
        out.declare(httpRequests)
        for entry in http?.snapshot ?? [] { out.sample(httpRequests, [entry.endpoint, String(entry.status)], entry.count) }
        families.histograms(
            requestDurations, into: &out, { requestDurationCounts($0.metrics.requestDurations) },
            extra: unknownAccountDurations.map(requestDurationCounts) ?? [])
        families.perEngine(resolveRequests, into: &out) { $0.metrics.resolveRequestCount }
        families.perEngine(cacheHits, into: &out) { $0.metrics.cacheHits.value }
        families.perEngine(cacheMisses, into: &out) { $0.metrics.cacheMisses.value }
        families.perEngine(negativeHits, into: &out) { $0.metrics.negativeHits.value }
        families.perEngine(singleFlightJoined, into: &out) { $0.metrics.singleFlightJoined.value }
        families.perEngine(resolveFailures, into: &out) { $0.metrics.resolveFailures.value }
        families.perEngine(staleServed, into: &out) { $0.metrics.staleServed.value }
        families.perEngine(prefetches, into: &out) { $0.metrics.prefetches.value }
        families.perEngine(speedTestRuns, into: &out) { $0.metrics.speedTestRuns.value }
        families.series(speedTestProbes, into: &out) { engine in
            [(["reachable"], engine.metrics.speedProbesReachable.value), (["unreachable"], engine.metrics.speedProbesUnreachable.value)]
        }
        families.series(upstreamRequests, into: &out) { engine in
            engine.metrics.upstreamCounts.map { key, value in ([key.upstream, key.outcome], value) }
        }
        families.histograms(upstreamDurations, into: &out) { engine in
            engine.metrics.upstreamDurations.map { key, counts in ([key.upstream, key.outcome], counts) }
        }
        families.histograms(preloadDurations, into: &out) { [([], $0.metrics.preloadDurations.withLock { $0 })] }
        families.series(fallback, into: &out) { engine in
            [(["success"], engine.metrics.fallbackSuccess.value), (["failure"], engine.metrics.fallbackFailure.value)]
        }
        families.series(
            rateLimited, into: &out,
            { engine in
                [
                    (["client_rate"], engine.metrics.clientRateRefusals.value),
                    (["upstream_budget"], engine.metrics.upstreamBudgetRefusals.value),
                ]
            }, extra: [(["client_rate"], unknownAccountRefusals)])
        families.perEngine(ruleAnswers, into: &out) { $0.metrics.ruleAnswers.value }
        // No totals by rule: the public listener would show the tenants' rule names.
        out.declare(ruleAnswersByRule)
        for engine in perAccount {
            for (rule, count) in engine.metrics.ruleAnswerCounts { out.sample(ruleAnswersByRule, [engine.accountID, rule], count) }
        }
        families.perEngine(cacheEntries, into: &out) { UInt64($0.cacheCount) }
        families.perEngine(statsDropped, into: &out) { $0.stats.droppedEvents }
    }

    /// The request-duration histograms of one table, by their labels other than `account`.
    private static func requestDurationCounts(_ table: DurationHistograms) -> [([String], HistogramCounts)] {
        (0..<RequestDurations.slotCount()).compactMap { slot in
            table.counts(slot).map { (RequestDurations.labels(slot: slot), $0) }
        }
    }
}

/// The engine families' samples: totals over `engines` first (no `account` label), then the
/// series of each engine in `perAccount`. Every descriptor here has `account` as its first label.
private struct EngineFamilies {
    var engines: [ResolverEngine]
    var perAccount: [ResolverEngine]

    /// The totals of one family by its other labels (`labels(engine)`: their values with the
    /// count; `extra` adds to the totals only), in the order they first appear, then the
    /// per-account samples.
    func series(
        _ descriptor: MetricDescriptor, into out: inout MetricsEmitter, _ labels: (ResolverEngine) -> [([String], UInt64)],
        extra: [([String], UInt64)] = []
    ) {
        out.declare(descriptor)
        var order: [[String]] = []
        var totals: [[String]: UInt64] = [:]
        for (other, value) in engines.flatMap(labels) + extra {
            if totals[other] == nil { order.append(other) }
            totals[other, default: 0] &+= value
        }
        for other in order { out.sample(descriptor, [""] + other, totals[other]!) }
        for engine in perAccount {
            for (other, value) in labels(engine) { out.sample(descriptor, [engine.accountID] + other, value) }
        }
    }

    func perEngine(_ descriptor: MetricDescriptor, into out: inout MetricsEmitter, _ value: (ResolverEngine) -> UInt64) {
        series(descriptor, into: &out) { [([], value($0))] }
    }

    /// The same for histograms: series of one label set are summed (totals over engines, and
    /// routes sharing labels); an account's empty ones are left out.
    func histograms(
        _ descriptor: MetricDescriptor, into out: inout MetricsEmitter, _ labels: (ResolverEngine) -> [([String], HistogramCounts)],
        extra: [([String], HistogramCounts)] = []
    ) {
        func emitMerged(_ list: [([String], HistogramCounts)], account: String) {
            var order: [[String]] = []
            var sums: [[String]: HistogramCounts] = [:]
            for (other, counts) in list {
                if sums[other] == nil { order.append(other) }
                sums[other, default: HistogramCounts()].add(counts)
            }
            for other in order { out.histogram(descriptor, [account] + other, sums[other]!) }
        }
        out.declare(descriptor)
        emitMerged(engines.flatMap(labels) + extra, account: "")
        // An account's empty histogram (no preload yet) says nothing its absence does not: left
        // out, it costs 19 lines per account less.
        for engine in perAccount {
            emitMerged(labels(engine).filter { $0.1.count > 0 }, account: engine.accountID)
        }
    }
}
