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

    /// Everything `/metrics` shows of the engines and the HTTP front. With `perAccount`, series
    /// carry an `account` label; without (the public listener, where account ids would tell an
    /// attacker the tenants' names), each family is summed over accounts by its other labels.
    /// `unknownAccountRefusals` are client-rate refusals of requests to no known account
    /// (`account=""`).
    static func render(engines: [ResolverEngine], http: HTTPMetrics?, perAccount: Bool, unknownAccountRefusals: UInt64 = 0) -> String {
        /// One sample per engine and label set (`labels(engine)`: the labels besides the account,
        /// formatted, with their values), summed over engines unless `perAccount`.
        func series(_ labels: (ResolverEngine) -> [(String, UInt64)], extra: [(String, UInt64)] = []) -> [(labels: String, value: UInt64)] {
            if perAccount {
                var samples = engines.flatMap { engine in
                    labels(engine).map { other, value in
                        let account = "account=\"\(escape(engine.accountID))\""
                        return (labels: other.isEmpty ? account : "\(account),\(other)", value: value)
                    }
                }
                for (other, value) in extra where value > 0 {
                    samples.append((labels: other.isEmpty ? "account=\"\"" : "account=\"\",\(other)", value: value))
                }
                return samples
            }
            var order: [String] = []
            var totals: [String: UInt64] = [:]
            for (other, value) in engines.flatMap(labels) + extra {
                if totals[other] == nil { order.append(other) }
                totals[other, default: 0] &+= value
            }
            return order.map { (labels: $0, value: totals[$0]!) }
        }
        func perEngine(_ value: @escaping (ResolverEngine) -> UInt64) -> [(labels: String, value: UInt64)] {
            series { [("", value($0))] }
        }
        var text = ""
        text += family("httpdns_http_requests_total", type: "counter", help: "HTTP responses by status code.",
                       samples: (http?.snapshot ?? []).map { (labels: "code=\"\($0.0)\"", value: $0.1) })
        text += family("httpdns_resolve_requests_total", type: "counter", help: "Lookups of one host and family.",
                       samples: perEngine { $0.metrics.resolveRequestCount })
        text += family("httpdns_cache_hits_total", type: "counter", help: "Lookups answered from the cache.",
                       samples: perEngine { $0.metrics.cacheHits.value })
        text += family("httpdns_cache_misses_total", type: "counter", help: "Lookups the cache could not answer.",
                       samples: perEngine { $0.metrics.cacheMisses.value })
        text += family("httpdns_cache_negative_hits_total", type: "counter", help: "Cache hits on negative (NXDOMAIN/NODATA) answers.",
                       samples: perEngine { $0.metrics.negativeHits.value })
        text += family("httpdns_singleflight_joined_total", type: "counter", help: "Misses that joined a resolution already in flight.",
                       samples: perEngine { $0.metrics.singleFlightJoined.value })
        text += family("httpdns_resolve_failures_total", type: "counter", help: "Resolutions where no upstream nor the fallback answered.",
                       samples: perEngine { $0.metrics.resolveFailures.value })
        text += family("httpdns_cache_served_stale_total", type: "counter", help: "Answers served from an expired entry (reuse of expired IPs, or serve-stale when resolution failed).",
                       samples: perEngine { $0.metrics.staleServed.value })
        text += family("httpdns_prefetch_total", type: "counter", help: "Background refreshes started before clients needed them (refresh-ahead, scheduled prefetch, refresh on demand).",
                       samples: perEngine { $0.metrics.prefetches.value })
        text += family("httpdns_speedtest_runs_total", type: "counter", help: "Answers whose addresses were probed by the connection speed test.",
                       samples: perEngine { $0.metrics.speedTestRuns.value })
        text += family("httpdns_speedtest_probes_total", type: "counter", help: "Speed-test probes of one address, by result.",
                       samples: series { engine in [
                           ("result=\"reachable\"", engine.metrics.speedProbesReachable.value),
                           ("result=\"unreachable\"", engine.metrics.speedProbesUnreachable.value),
                       ] })
        text += family("httpdns_upstream_requests_total", type: "counter", help: "Queries sent to upstreams, by outcome.",
                       samples: series { engine in
                           engine.metrics.upstreamCounts.map { key, value in
                               ("upstream=\"\(escape(key.upstream))\",outcome=\"\(key.outcome)\"", value)
                           }
                       })
        text += family("httpdns_fallback_total", type: "counter", help: "Resolutions that fell back to the system resolver, by outcome.",
                       samples: series { engine in [
                           ("outcome=\"success\"", engine.metrics.fallbackSuccess.value),
                           ("outcome=\"failure\"", engine.metrics.fallbackFailure.value),
                       ] })
        text += family("httpdns_rate_limited_total", type: "counter", help: "Requests refused (429) by the client rate limit (reason client_rate), and upstream queries not started because the account's upstream budget was spent (reason upstream_budget).",
                       samples: series({ engine in [
                           ("reason=\"client_rate\"", engine.metrics.clientRateRefusals.value),
                           ("reason=\"upstream_budget\"", engine.metrics.upstreamBudgetRefusals.value),
                       ] }, extra: [("reason=\"client_rate\"", unknownAccountRefusals)]))
        text += family("httpdns_cache_entries", type: "gauge", help: "Entries in the cache.",
                       samples: perEngine { UInt64($0.cacheCount) })
        text += family("httpdns_stats_dropped_events_total", type: "counter", help: "Statistics events dropped because the per-account record limit was reached.",
                       samples: perEngine { $0.stats.droppedEvents })
        return text
    }
}
