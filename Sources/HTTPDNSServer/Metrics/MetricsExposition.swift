import HTTPDNSCore

/// Renders the Prometheus text format (0.0.4): `# HELP`, `# TYPE`, then samples.
public enum MetricsExposition {
    /// Escapes a label value (backslash, quote, newline).
    public static func escape(_ value: String) -> String {
        var result = ""
        for character in value {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result
    }

    /// One metric family with its samples (`labels` already formatted as `a="b",c="d"`).
    public static func family(_ name: String, type: String, help: String, samples: [(labels: String, value: UInt64)]) -> String {
        var text = "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        for sample in samples {
            text += sample.labels.isEmpty ? "\(name) \(sample.value)\n" : "\(name){\(sample.labels)} \(sample.value)\n"
        }
        return text
    }

    /// One histogram family: cumulative `_bucket` samples with `le`, `_sum` (seconds), `_count`.
    public static func histogram(_ name: String, help: String, samples: [(labels: String, counts: HistogramCounts)]) -> String {
        var text = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for sample in samples {
            let prefix = sample.labels.isEmpty ? "" : "\(sample.labels),"
            var cumulative: UInt64 = 0
            for (index, bucket) in sample.counts.buckets.enumerated() {
                cumulative &+= bucket
                text += "\(name)_bucket{\(prefix)le=\"\(leLabels[index])\"} \(cumulative)\n"
            }
            let braces = sample.labels.isEmpty ? "" : "{\(sample.labels)}"
            text += "\(name)_sum\(braces) \(sample.counts.sumSeconds)\n\(name)_count\(braces) \(cumulative)\n"
        }
        return text
    }

    /// The `le` values of `DurationBuckets`, as Prometheus writes them (`0.0001` … `10`, `+Inf`).
    static let leLabels: [String] =
        DurationBuckets.bounds.map { bound in
            bound == bound.rounded() ? String(Int(bound)) : "\(bound)"
        } + ["+Inf"]

    /// Everything `/metrics` shows of the engines and the HTTP front. Every family has its totals
    /// without an `account` label; the engines in `perAccount` (the operations listener's choice
    /// under `metricsAccounts`; none on the public listener, where account ids would tell an
    /// attacker the tenants' names) add their own series labelled `account`, so a total is
    /// `x{account=""}` and a per-account graph `x{account!=""}`. `unknownAccountRefusals` and
    /// `unknownAccountDurations` are of requests to no known account (in the totals only).
    static func render(
        engines: [ResolverEngine], http: HTTPMetrics?, perAccount: [ResolverEngine], unknownAccountRefusals: UInt64 = 0,
        unknownAccountDurations: DurationHistograms? = nil
    ) -> String {
        /// The totals of one family by its other labels (`labels(engine)`: those labels, formatted,
        /// with their values; `extra` adds to the totals only), then the per-account samples.
        func series(_ labels: (ResolverEngine) -> [(String, UInt64)], extra: [(String, UInt64)] = []) -> [(labels: String, value: UInt64)] {
            var order: [String] = []
            var totals: [String: UInt64] = [:]
            for (other, value) in engines.flatMap(labels) + extra {
                if totals[other] == nil { order.append(other) }
                totals[other, default: 0] &+= value
            }
            var samples = order.map { (labels: $0, value: totals[$0]!) }
            for engine in perAccount {
                let account = "account=\"\(escape(engine.accountID))\""
                for (other, value) in labels(engine) {
                    samples.append((labels: other.isEmpty ? account : "\(account),\(other)", value: value))
                }
            }
            return samples
        }
        /// The same for histograms: samples of one label set are summed (totals over engines,
        /// and routes sharing labels); an account's empty ones are left out.
        func histograms(_ labels: (ResolverEngine) -> [(String, HistogramCounts)], extra: [(String, HistogramCounts)] = []) -> [(
            labels: String, counts: HistogramCounts
        )] {
            func merged(_ list: [(String, HistogramCounts)], prefix: String) -> [(labels: String, counts: HistogramCounts)] {
                var order: [String] = []
                var sums: [String: HistogramCounts] = [:]
                for (other, counts) in list {
                    let key = prefix.isEmpty ? other : other.isEmpty ? prefix : "\(prefix),\(other)"
                    if sums[key] == nil { order.append(key) }
                    sums[key, default: HistogramCounts()].add(counts)
                }
                return order.map { (labels: $0, counts: sums[$0]!) }
            }
            var samples = merged(engines.flatMap(labels) + extra, prefix: "")
            // An account's empty histogram (no preload yet) says nothing its absence does not: left
            // out, it costs 19 lines per account less.
            for engine in perAccount {
                samples += merged(labels(engine).filter { $0.1.count > 0 }, prefix: "account=\"\(escape(engine.accountID))\"")
            }
            return samples
        }
        func perEngine(_ value: @escaping (ResolverEngine) -> UInt64) -> [(labels: String, value: UInt64)] {
            series { [("", value($0))] }
        }
        func requestDurations(_ table: DurationHistograms) -> [(String, HistogramCounts)] {
            (0..<RequestDurations.slotCount()).compactMap { slot in
                table.counts(slot).map { (RequestDurations.labels(slot: slot), $0) }
            }
        }
        var text = ""
        text += family(
            "httpdns_http_requests_total", type: "counter",
            help: "HTTP responses by endpoint (route path, other when none matched) and status code.",
            samples: (http?.snapshot ?? []).map { (labels: "endpoint=\"\(escape($0.endpoint))\",code=\"\($0.status)\"", value: $0.count) })
        text += histogram(
            "httpdns_request_duration_seconds",
            help:
                "Tenant API requests, from routing to the response ready, by wire API (protocol), endpoint and what answered (source: cache, upstream, stale, localdns, none for requests that looked nothing up).",
            samples: histograms(
                { requestDurations($0.metrics.requestDurations) },
                extra: unknownAccountDurations.map(requestDurations) ?? []))
        text += family(
            "httpdns_resolve_requests_total", type: "counter", help: "Lookups of one host and family.",
            samples: perEngine { $0.metrics.resolveRequestCount })
        text += family(
            "httpdns_cache_hits_total", type: "counter", help: "Lookups answered from the cache.",
            samples: perEngine { $0.metrics.cacheHits.value })
        text += family(
            "httpdns_cache_misses_total", type: "counter", help: "Lookups the cache could not answer.",
            samples: perEngine { $0.metrics.cacheMisses.value })
        text += family(
            "httpdns_cache_negative_hits_total", type: "counter", help: "Cache hits on negative (NXDOMAIN/NODATA) answers.",
            samples: perEngine { $0.metrics.negativeHits.value })
        text += family(
            "httpdns_singleflight_joined_total", type: "counter", help: "Misses that joined a resolution already in flight.",
            samples: perEngine { $0.metrics.singleFlightJoined.value })
        text += family(
            "httpdns_resolve_failures_total", type: "counter", help: "Resolutions where no upstream nor the fallback answered.",
            samples: perEngine { $0.metrics.resolveFailures.value })
        text += family(
            "httpdns_cache_served_stale_total", type: "counter",
            help: "Answers served from an expired entry (reuse of expired IPs, or serve-stale when resolution failed).",
            samples: perEngine { $0.metrics.staleServed.value })
        text += family(
            "httpdns_prefetch_total", type: "counter",
            help: "Background refreshes started before clients needed them (refresh-ahead, scheduled prefetch, refresh on demand).",
            samples: perEngine { $0.metrics.prefetches.value })
        text += family(
            "httpdns_speedtest_runs_total", type: "counter", help: "Answers whose addresses were probed by the connection speed test.",
            samples: perEngine { $0.metrics.speedTestRuns.value })
        text += family(
            "httpdns_speedtest_probes_total", type: "counter", help: "Speed-test probes of one address, by result.",
            samples: series { engine in
                [
                    ("result=\"reachable\"", engine.metrics.speedProbesReachable.value),
                    ("result=\"unreachable\"", engine.metrics.speedProbesUnreachable.value),
                ]
            })
        text += family(
            "httpdns_upstream_requests_total", type: "counter", help: "Queries sent to upstreams, by outcome.",
            samples: series { engine in
                engine.metrics.upstreamCounts.map { key, value in
                    ("upstream=\"\(escape(key.upstream))\",outcome=\"\(key.outcome)\"", value)
                }
            })
        text += histogram(
            "httpdns_upstream_request_duration_seconds",
            help: "Queries sent to upstreams, by upstream and outcome, from sending to the answer or the failure.",
            samples: histograms { engine in
                engine.metrics.upstreamDurations.map { key, counts in
                    ("upstream=\"\(escape(key.upstream))\",outcome=\"\(key.outcome)\"", counts)
                }
            })
        text += histogram(
            "httpdns_preload_duration_seconds", help: "Preloads (POST /v1/{account}/preload), from the request to the last resolution.",
            samples: histograms { [("", $0.metrics.preloadDurations.withLock { $0 })] })
        text += family(
            "httpdns_fallback_total", type: "counter", help: "Resolutions that fell back to the system resolver, by outcome.",
            samples: series { engine in
                [
                    ("outcome=\"success\"", engine.metrics.fallbackSuccess.value),
                    ("outcome=\"failure\"", engine.metrics.fallbackFailure.value),
                ]
            })
        text += family(
            "httpdns_rate_limited_total", type: "counter",
            help:
                "Requests refused (429) by the client rate limit (reason client_rate), and upstream queries not started because the account's upstream budget was spent (reason upstream_budget).",
            samples: series(
                { engine in
                    [
                        ("reason=\"client_rate\"", engine.metrics.clientRateRefusals.value),
                        ("reason=\"upstream_budget\"", engine.metrics.upstreamBudgetRefusals.value),
                    ]
                }, extra: [("reason=\"client_rate\"", unknownAccountRefusals)]))
        text += family(
            "httpdns_cache_entries", type: "gauge", help: "Entries in the cache.",
            samples: perEngine { UInt64($0.cacheCount) })
        text += family(
            "httpdns_stats_dropped_events_total", type: "counter",
            help: "Statistics events dropped because the per-account record limit was reached.",
            samples: perEngine { $0.stats.droppedEvents })
        return text
    }
}
