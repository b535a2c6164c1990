import HTTPDNSCore

/// The probes and `/metrics`: what the service reports about itself.
struct OpsHandler: Sendable {
    let registry: AccountRegistry
    let state: ServiceState
    /// Which accounts `/metrics` on the operations listener shows per account.
    let metricsAccounts: MetricsAccounts
    let activity: MetricsActivity
    let dnsMessages: DNSMessageMetrics
    /// Requests to no known account: refused by the client rate limit, and their durations.
    let unknownAccountRefusals: StripedCounter
    let unknownAccountDurations: DurationHistograms

    func healthz() -> HandlerResult {
        .response(HTTPResponse(status: 200, body: Array(#"{"status":"ok"}"#.utf8)))
    }

    /// 200 once the cache is loaded, 503 before and while stopping. A store whose writes fail
    /// does not make the service unready (the cache still answers): the body says `"degraded"`
    /// and why, under `store`.
    func readyz() -> HandlerResult {
        guard state.isReady else {
            return .response(APIError(.serviceUnavailable, "not ready (loading the cache or shutting down)").response)
        }
        guard let health = state.storeHealth else {
            return .response(HTTPResponse(status: 200, body: Array(#"{"status":"ready"}"#.utf8)))
        }
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("status")
        writer.string(health.healthy ? "ready" : "degraded")
        writer.comma()
        writer.key("store")
        writer.raw("{")
        writer.key("healthy")
        writer.bool(health.healthy)
        writer.comma()
        writer.key("pendingChanges")
        writer.number(health.pendingChanges)
        if let error = health.lastError {
            writer.comma()
            writer.key("error")
            writer.string(error)
        }
        if let since = health.failingSince {
            writer.comma()
            writer.key("failingSince")
            writer.number(Int(since))
        }
        if let damaged = health.damagedFile { Self.writeDamagedFile(damaged, to: &writer) }
        writer.raw("}}")
        return .response(.json(200, writer))
    }

    /// `"damagedFile":{...}` of `/readyz`: the file's new name (not its directory: `/readyz` is
    /// public), why, when, and whether at start-up (its accounts were not loaded).
    private static func writeDamagedFile(_ damaged: DamagedFile, to writer: inout JSONWriter) {
        writer.comma()
        writer.key("damagedFile")
        writer.raw("{")
        writer.key("movedTo")
        writer.string(String(damaged.movedTo.split(separator: "/").last ?? ""))
        writer.comma()
        writer.key("reason")
        writer.string(damaged.reason)
        writer.comma()
        writer.key("at")
        writer.number(Int(damaged.at))
        writer.comma()
        writer.key("atStartUp")
        writer.bool(damaged.atStartUp)
        writer.raw("}")
    }

    static let readyFamily = MetricDescriptor(
        "httpdns_ready", .gauge, help: "1 while /readyz answers 200 (the cache is loaded and the service is not stopping), else 0.")

    /// `/metrics`. Totals on every listener; series per account only on the operations listener
    /// (on the public one the account ids would list the tenants), for the accounts
    /// `metricsAccounts` selects.
    func metrics(listener: Listener) -> HandlerResult {
        let engines = registry.all
        var perAccount: [ResolverEngine] = []
        if listener == .ops {
            switch metricsAccounts {
            case .all: perAccount = engines
            case .active: perAccount = activity.active(engines)
            case .none: break
            }
        }
        var out = MetricsEmitter()
        MetricsExposition.emit(
            into: &out, engines: engines, http: state.httpMetrics, perAccount: perAccount,
            unknownAccountRefusals: unknownAccountRefusals.value, unknownAccountDurations: unknownAccountDurations)
        out.sample(Self.readyFamily, [], state.isReady ? 1 : 0)
        dnsMessages.emit(into: &out)
        for source in state.metricsSources { source(&out) }
        return .response(HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: out.bytes))
    }
}
