import HTTPDNSCore

/// RFC 8484 counters for `/metrics`: messages refused as malformed, and queries forwarded to
/// the upstreams (types other than A and AAAA) by outcome.
final class DNSMessageMetrics: Sendable {
    let malformed = StripedCounter()
    let forwarded = StripedCounter()
    let forwardFailures = StripedCounter()
    /// One log line per account every 10 s when forwarding fails (a dead upstream would else
    /// write one per query).
    let forwardFailureLog = LogThrottle(interval: 10)

    static let malformedFamily = MetricDescriptor(
        "httpdns_dns_message_malformed_total", .counter,
        help: "RFC 8484 requests refused with 400 because the DNS message did not parse or was not a query.")
    static let forwardedFamily = MetricDescriptor(
        "httpdns_dns_message_forwarded_total", .counter,
        help: "RFC 8484 queries of types other than A and AAAA forwarded to the upstreams, by outcome.", labels: ["outcome"])

    func emit(into out: inout MetricsEmitter) {
        out.sample(Self.malformedFamily, [], malformed.value)
        out.sample(Self.forwardedFamily, ["answered"], forwarded.value)
        out.sample(Self.forwardedFamily, ["failed"], forwardFailures.value)
    }
}
