import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSStore
import HTTPDNSTap

/// The query log's counters for `/metrics`.
enum QueryLogMetrics {
    static let written = MetricDescriptor(
        "httpdns_querylog_entries_written_total", .counter, help: "Query log entries committed to the query log's SQLite file.")
    static let dropped = MetricDescriptor(
        "httpdns_querylog_entries_dropped_total", .counter,
        help: "Query log entries dropped because the queue to the query log's writer was full (never blocking a request).")
    static let writeErrors = MetricDescriptor(
        "httpdns_querylog_write_errors_total", .counter, help: "Failed writes of the query log (their entries are lost).")

    static let dnstapFrames = MetricDescriptor(
        "httpdns_dnstap_frames_total", .counter,
        help: "dnstap frames of logged lookups: sent (handed to the Frame Streams writer) or dropped (its queue was full).",
        labels: ["result"])

    static func emit(_ queue: QueryLogQueue, _ store: QueryLogStore, dnstap: DnstapWriter?, into out: inout MetricsEmitter) {
        out.sample(written, [], UInt64(queue.written))
        out.sample(dropped, [], UInt64(queue.dropped))
        out.sample(writeErrors, [], UInt64(store.writeErrors))
        if let dnstap {
            out.sample(dnstapFrames, ["sent"], UInt64(dnstap.sent))
            out.sample(dnstapFrames, ["dropped"], UInt64(dnstap.dropped))
        }
    }
}
