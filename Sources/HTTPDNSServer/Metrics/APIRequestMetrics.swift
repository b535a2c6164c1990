import HTTPDNSCore

/// Tenant API requests by the wire API they spoke, for `httpdns_api_requests_total{protocol}`:
/// every request routed to an `{account}` route (whatever its outcome), plus the v1 hits the
/// fast path answers. Striped counters, incremented without a retain (the fast path counts here).
final class APIRequestMetrics: Sendable {
    private let counters: [StripedCounter] = WireFormat.allCases.map { _ in StripedCounter() }
    private let unretained: [StripedCounter.Unretained]

    init() {
        unretained = counters.map(StripedCounter.Unretained.init)
    }

    func record(_ format: WireFormat) {
        unretained[format.index].increment()
    }

    /// The metric family, every protocol listed (zeros too, so a dashboard sees them all).
    var exposition: String {
        MetricsExposition.family(
            "httpdns_api_requests_total", type: "counter", help: "Tenant API requests, by wire API (v1, emas, json).",
            samples: WireFormat.allCases.map { (labels: "protocol=\"\($0.rawValue)\"", value: counters[$0.index].value) })
    }
}
