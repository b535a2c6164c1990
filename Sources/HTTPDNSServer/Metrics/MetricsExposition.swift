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

    static func render(engines: [ResolverEngine], http: HTTPMetrics?) -> String {
        func perAccount(_ value: (ResolverEngine) -> UInt64) -> [(labels: String, value: UInt64)] {
            engines.map { (labels: "account=\"\(escape($0.accountID))\"", value: value($0)) }
        }
        var text = ""
        text += family("httpdns_http_requests_total", type: "counter", help: "HTTP responses by status code.",
                       samples: (http?.snapshot ?? []).map { (labels: "code=\"\($0.0)\"", value: $0.1) })
        text += family("httpdns_resolve_requests_total", type: "counter", help: "Lookups of one host and family.",
                       samples: perAccount { $0.metrics.resolveRequestCount })
        text += family("httpdns_cache_hits_total", type: "counter", help: "Lookups answered from the cache.",
                       samples: perAccount { $0.metrics.cacheHits.value })
        text += family("httpdns_cache_misses_total", type: "counter", help: "Lookups the cache could not answer.",
                       samples: perAccount { $0.metrics.cacheMisses.value })
        text += family("httpdns_cache_negative_hits_total", type: "counter", help: "Cache hits on negative (NXDOMAIN/NODATA) answers.",
                       samples: perAccount { $0.metrics.negativeHits.value })
        text += family("httpdns_singleflight_joined_total", type: "counter", help: "Misses that joined a resolution already in flight.",
                       samples: perAccount { $0.metrics.singleFlightJoined.value })
        text += family("httpdns_resolve_failures_total", type: "counter", help: "Resolutions where no upstream nor the fallback answered.",
                       samples: perAccount { $0.metrics.resolveFailures.value })
        text += family("httpdns_cache_served_stale_total", type: "counter", help: "Answers served from an expired entry (reuse of expired IPs, or serve-stale when resolution failed).",
                       samples: perAccount { $0.metrics.staleServed.value })
        text += family("httpdns_prefetch_total", type: "counter", help: "Background refreshes started before clients needed them (refresh-ahead, scheduled prefetch, refresh on demand).",
                       samples: perAccount { $0.metrics.prefetches.value })
        text += family("httpdns_speedtest_runs_total", type: "counter", help: "Answers whose addresses were probed by the connection speed test.",
                       samples: perAccount { $0.metrics.speedTestRuns.value })
        text += family("httpdns_speedtest_probes_total", type: "counter", help: "Speed-test probes of one address, by result.",
                       samples: engines.flatMap { engine in [
                           (labels: "account=\"\(escape(engine.accountID))\",result=\"reachable\"", value: engine.metrics.speedProbesReachable.value),
                           (labels: "account=\"\(escape(engine.accountID))\",result=\"unreachable\"", value: engine.metrics.speedProbesUnreachable.value),
                       ] })
        text += family("httpdns_upstream_requests_total", type: "counter", help: "Queries sent to upstreams, by outcome.",
                       samples: engines.flatMap { engine in
                           engine.metrics.upstreamCounts.map { key, value in
                               (labels: "account=\"\(escape(engine.accountID))\",upstream=\"\(escape(key.upstream))\",outcome=\"\(key.outcome)\"", value: value)
                           }
                       })
        text += family("httpdns_fallback_total", type: "counter", help: "Resolutions that fell back to the system resolver, by outcome.",
                       samples: engines.flatMap { engine in [
                           (labels: "account=\"\(escape(engine.accountID))\",outcome=\"success\"", value: engine.metrics.fallbackSuccess.value),
                           (labels: "account=\"\(escape(engine.accountID))\",outcome=\"failure\"", value: engine.metrics.fallbackFailure.value),
                       ] })
        text += family("httpdns_cache_entries", type: "gauge", help: "Entries in the cache.",
                       samples: perAccount { UInt64($0.cacheCount) })
        text += family("httpdns_stats_dropped_events_total", type: "counter", help: "Statistics events dropped because the per-account record limit was reached.",
                       samples: perAccount { $0.stats.droppedEvents })
        return text
    }
}
