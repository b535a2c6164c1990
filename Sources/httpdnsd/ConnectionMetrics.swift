import HTTPDNSServer

/// Each listener's connection counters in the Prometheus text format (`listener` is main,
/// plain or ops).
enum ConnectionMetrics {
    static func render(_ listeners: [(name: String, server: HTTPServer)]) -> String {
        let stats = listeners.map { ($0.name, $0.server.connectionStats) }
        return MetricsExposition.family(
            "httpdns_connections_open", type: "gauge", help: "Open client connections.",
            samples: stats.map { (labels: "listener=\"\($0.0)\"", value: UInt64($0.1.open)) })
            + MetricsExposition.family(
                "httpdns_connections_rejected_total", type: "counter",
                help:
                    "Connections closed at accept: reason limit (connectionLimit open) or per_address (perIPConnectionLimit open from that address).",
                samples: stats.flatMap { name, values in
                    [
                        (labels: "listener=\"\(name)\",reason=\"limit\"", value: UInt64(values.rejectedAtLimit)),
                        (labels: "listener=\"\(name)\",reason=\"per_address\"", value: UInt64(values.rejectedPerAddress)),
                    ]
                })
            + MetricsExposition.family(
                "httpdns_requests_in_flight", type: "gauge",
                help: "Requests received and not yet answered (waiting for an upstream included).",
                samples: listeners.map { (labels: "listener=\"\($0.name)\"", value: UInt64(max(0, $0.server.requestsInFlight))) })
            + MetricsExposition.family(
                "httpdns_connections_closed_slow_total", type: "counter",
                help: "Connections shut down because a request did not arrive whole within requestReadTimeout.",
                samples: stats.map { (labels: "listener=\"\($0.0)\"", value: UInt64($0.1.closedSlow)) })
            + MetricsExposition.family(
                "httpdns_connections_shed_total", type: "counter",
                help: "Connections shut down at connectionLimit to admit a client holding fewer (of the client holding the most).",
                samples: stats.map { (labels: "listener=\"\($0.0)\"", value: UInt64($0.1.shed)) })
            + MetricsExposition.family(
                "httpdns_http_fast_path_total", type: "counter",
                help: "Requests answered by the resolve fast path (cache hits of GET /v1/{account}/resolve, without routing).",
                samples: listeners.map { (labels: "listener=\"\($0.name)\"", value: $0.server.fastPathAnswers) })
    }
}
