import Foundation
import HTTPDNSTestSupport
import Testing

/// `opsListen`: `/metrics` and the admin API on their own port, the tenant API on the public one
/// (and, for the admin only, on the operations one), the probes on both.
@Suite("Operations listener")
struct OpsListenerTests {
    static let token = "ops-listener-token-123"
    static let bearer = ["Authorization": "Bearer \(token)"]

    @Test func metricsAndAdminAnswerOnlyOnTheOpsPortAndTheTenantAPIToAnyoneOnlyOnThePublicOne() async throws {
        try await withService(configure: { _, options in
            options.adminToken = Self.token
            options.listen("--ops-listen", port: "ops")
        }) { _, service in
            let ops = HTTPClient(port: try service.port(named: "ops"))
            let public_ = service.client
            expectError(try await public_.get("/metrics"), status: 404, code: "NotFound")
            expectError(try await public_.get("/v1/accounts", headers: Self.bearer), status: 404, code: "NotFound")
            expectError(try await public_.get("/v1/accounts/default", headers: Self.bearer), status: 404, code: "NotFound")

            let metrics = try await ops.get("/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.text.contains("httpdns_connections_open{listener=\"ops\"}"))
            #expect(try await ops.get("/v1/accounts", headers: Self.bearer).status == 200)
            #expect(try await ops.get("/v1/accounts/default", headers: Self.bearer).status == 200)

            for client in [public_, ops] {
                #expect(try await client.get("/healthz").status == 200)
                #expect(try await client.get("/readyz").status == 200)
            }
            let resolve = try await public_.get("/v1/default/resolve?host=\(TestZone.www)")
            #expect(resolve.status == 200)
            // The tenant API is there for the admin only (the console's use).
            expectError(try await ops.get("/v1/default/resolve?host=\(TestZone.www)"), status: 401, code: "Unauthorized")
            expectError(try await ops.get("/v1/default/stats"), status: 401, code: "Unauthorized")
            #expect(try await ops.get("/v1/default/stats", headers: Self.bearer).status == 200)
        }
    }

    @Test func withoutAnOpsListenerMetricsStayOnTheMainListener() async throws {
        try await withService { _, service in
            let metrics = try await service.client.get("/metrics")
            #expect(metrics.status == 200)
        }
    }
}
