import Dispatch
import Testing

@testable import HTTPDNSServer

@Suite struct HTTPMetricsTests {
    private let resolve = RouteTable.standard.route("GET", "/v1/{account}/resolve").endpoint
    private let healthz = RouteTable.standard.endpoints.firstIndex(of: "/healthz")!

    @Test func responsesAreCountedByEndpointAndStatusFromManyThreads() {
        let metrics = HTTPMetrics()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<1_000 { metrics.recordFastHit(endpoint: resolve) }
        }
        metrics.record(status: 200, endpoint: healthz)
        metrics.record(status: 418, endpoint: resolve)
        metrics.record(status: 404, endpoint: RouteTable.otherEndpoint)
        metrics.record(status: 404, endpoint: RouteTable.otherEndpoint)
        metrics.record(status: 42, endpoint: resolve)  // not an HTTP status: ignored
        let rows = metrics.snapshot.map { "\($0.endpoint) \($0.status) \($0.count)" }
        #expect(rows == ["other 404 2", "/healthz 200 1", "/v1/{account}/resolve 200 4000", "/v1/{account}/resolve 418 1"])
        #expect(metrics.byStatus.map(\.0) == [200, 404, 418])
        #expect(metrics.byStatus.map(\.1) == [4_001, 2, 1])
    }

    @Test func everyRouteHasAnEndpointLabelAndRoutesOfOnePathShareIt() {
        let table = RouteTable.standard
        #expect(table.endpoints.first == "other")
        #expect(Set(table.endpoints).count == table.endpoints.count)
        for route in table.routes { #expect(table.endpoints[route.endpoint] == route.path) }
    }
}
