import HTTPDNSServer

/// Each listener's connection counters for `/metrics` (`listener` is main, plain or ops).
enum ConnectionMetrics {
    static let open = MetricDescriptor("httpdns_connections_open", .gauge, help: "Open client connections.", labels: ["listener"])
    static let rejected = MetricDescriptor(
        "httpdns_connections_rejected_total", .counter,
        help:
            "Connections closed at accept: reason limit (connectionLimit open) or per_address (perIPConnectionLimit open from that address).",
        labels: ["listener", "reason"])
    static let inFlight = MetricDescriptor(
        "httpdns_requests_in_flight", .gauge, help: "Requests received and not yet answered (waiting for an upstream included).",
        labels: ["listener"])
    static let closedSlow = MetricDescriptor(
        "httpdns_connections_closed_slow_total", .counter,
        help: "Connections shut down because a request did not arrive whole within requestReadTimeout.", labels: ["listener"])
    static let shed = MetricDescriptor(
        "httpdns_connections_shed_total", .counter,
        help: "Connections shut down at connectionLimit to admit a client holding fewer (of the client holding the most).",
        labels: ["listener"])
    static let fastPath = MetricDescriptor(
        "httpdns_http_fast_path_total", .counter,
        help: "Requests answered by the resolve fast path (cache hits of GET /v1/{account}/resolve, without routing).",
        labels: ["listener"])

    static func emit(_ listeners: [(name: String, server: HTTPServer)], into out: inout MetricsEmitter) {
        let stats = listeners.map { ($0.name, $0.server.connectionStats) }
        for descriptor in [open, rejected, inFlight, closedSlow, shed, fastPath] { out.declare(descriptor) }
        for (name, values) in stats {
            out.sample(open, [name], UInt64(values.open))
            out.sample(rejected, [name, "limit"], UInt64(values.rejectedAtLimit))
            out.sample(rejected, [name, "per_address"], UInt64(values.rejectedPerAddress))
            out.sample(closedSlow, [name], UInt64(values.closedSlow))
            out.sample(shed, [name], UInt64(values.shed))
        }
        for listener in listeners {
            out.sample(inFlight, [listener.name], UInt64(max(0, listener.server.requestsInFlight)))
            out.sample(fastPath, [listener.name], listener.server.fastPathAnswers)
        }
    }
}
