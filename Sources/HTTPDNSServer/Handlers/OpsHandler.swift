import HTTPDNSCore

extension HTTPDNSService {
    func healthz() -> HandlerResult {
        .response(HTTPResponse(status: 200, body: Array(#"{"status":"ok"}"#.utf8)))
    }

    func readyz() -> HandlerResult {
        if isReady { return .response(HTTPResponse(status: 200, body: Array(#"{"status":"ready"}"#.utf8))) }
        return .response(APIError(.serviceUnavailable, "not ready (loading the cache or shutting down)").response)
    }

    /// `/metrics`. Series carry the `account` label only on the operations listener: on the
    /// public one the account ids would list the tenants, so their series are summed there.
    func metrics(listener: Listener) -> HandlerResult {
        var text = MetricsExposition.render(
            engines: registry.all, http: httpMetrics.withLock { $0 }, perAccount: listener == .ops,
            unknownAccountRefusals: unknownAccountRefusals.value)
        text += apiRequests.exposition
        for source in metricsSources { text += source() }
        return .response(HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(text.utf8)))
    }
}
