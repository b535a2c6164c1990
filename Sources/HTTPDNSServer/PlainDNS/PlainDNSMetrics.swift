import HTTPDNSCore
import Synchronization

/// Counters of the plain DNS and DoT listeners for `/metrics`, by transport (`udp`, `tcp`,
/// `dot`): queries read, messages dropped as malformed, queries over the client rate; and plain
/// DNS's own: UDP answers sent truncated, and TCP connections (open, refused over the limit).
/// One instance serves both listeners (the DoT listener's connections count in `DoTMetrics`).
public final class PlainDNSMetrics: Sendable {
    let queries = [StripedCounter(), StripedCounter(), StripedCounter()]
    let malformed = [StripedCounter(), StripedCounter(), StripedCounter()]
    let rateLimited = [StripedCounter(), StripedCounter(), StripedCounter()]
    let truncated = StripedCounter()
    let connectionsRefused = StripedCounter()
    let connectionsOpen = Atomic<Int>(0)

    public init() {}

    static func index(_ transport: PlainDNSMessages.Transport) -> Int {
        switch transport {
        case .udp: 0
        case .tcp: 1
        case .dot: 2
        }
    }

    static let queriesFamily = MetricDescriptor(
        "httpdns_dns_queries_total", .counter, help: "DNS queries read by the plain DNS and DoT listeners, by transport.",
        labels: ["protocol"])
    static let malformedFamily = MetricDescriptor(
        "httpdns_dns_malformed_total", .counter,
        help: "DNS messages dropped because they did not parse or were not a query, by transport.", labels: ["protocol"])
    static let rateLimitedFamily = MetricDescriptor(
        "httpdns_dns_rate_limited_total", .counter,
        help: "DNS queries over the client rate (dropped over UDP, REFUSED over TCP and DoT), by transport.", labels: ["protocol"])
    static let truncatedFamily = MetricDescriptor(
        "httpdns_dns_truncated_total", .counter, help: "Plain DNS answers too large for UDP, sent with TC set (question only).")
    static let connectionsOpenFamily = MetricDescriptor(
        "httpdns_dns_tcp_connections_open", .gauge, help: "Open plain DNS TCP connections.")
    static let connectionsRefusedFamily = MetricDescriptor(
        "httpdns_dns_tcp_connections_refused_total", .counter, help: "Plain DNS TCP connections closed at once over dnsTCPConnectionLimit.")

    /// Writes every family (each transport's samples, zero included, so that rates can be taken
    /// from the first scrape).
    public func emit(into out: inout MetricsEmitter) {
        for transport in PlainDNSMessages.Transport.allCases {
            out.sample(Self.queriesFamily, [transport.rawValue], queries[Self.index(transport)].value)
        }
        for transport in PlainDNSMessages.Transport.allCases {
            out.sample(Self.malformedFamily, [transport.rawValue], malformed[Self.index(transport)].value)
        }
        for transport in PlainDNSMessages.Transport.allCases {
            out.sample(Self.rateLimitedFamily, [transport.rawValue], rateLimited[Self.index(transport)].value)
        }
        out.sample(Self.truncatedFamily, [], truncated.value)
        out.sample(Self.connectionsOpenFamily, [], UInt64(max(0, connectionsOpen.load(ordering: .relaxed))))
        out.sample(Self.connectionsRefusedFamily, [], connectionsRefused.value)
    }
}
