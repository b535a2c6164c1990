import Foundation
import HTTPDNSCore
@testable import HTTPDNSServer
import HTTPDNSTestSupport
import Testing

/// `httpdns_api_requests_total{protocol}`: tenant requests counted once by the wire API they spoke.
@Suite struct APIRequestMetricsTests {
    private func counts(_ fixture: ServiceFixture) -> [String: Double] {
        let metrics = MetricsText(fixture.get("/metrics").text)
        #expect(metrics.problems.isEmpty, "\(metrics.problems)")
        #expect(metrics.types["httpdns_api_requests_total"] == "counter")
        var counts: [String: Double] = [:]
        for sample in metrics.samples where sample.name == "httpdns_api_requests_total" {
            counts[sample.labels["protocol"] ?? "?"] = sample.value
        }
        return counts
    }

    @Test func eachTenantRequestIsCountedOnceUnderItsProtocol() {
        let fixture = ServiceFixture()
        fixture.seed([("www.example.test", .a, fixture.entry(["192.0.2.10"]))])
        #expect(counts(fixture) == ["v1": 0, "emas": 0, "json": 0])
        // A fast-path hit, a fast-path miss answered by the full path, a full-path batch.
        #expect(fixture.service.fastResponse(MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test")]))?.body != nil)
        #expect(fixture.service.fastResponse(MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test"), ("type", "both")]))?.body == nil)
        _ = fixture.get("/v1/default/resolve", ["host": "www.example.test", "type": "both"])
        _ = fixture.get("/v1/default/stats")
        // EMAS: a hit, a refusal, an unknown account; /healthz is not a tenant request.
        _ = fixture.get("/default/d", ["host": "www.example.test"])
        _ = fixture.get("/default/d", ["host": "bad_name!"])
        _ = fixture.get("/nosuch/resolve", ["host": "www.example.test"])
        _ = fixture.get("/healthz")
        // DoH JSON: a hit of the default account, an unknown uid.
        _ = fixture.get("/resolve", ["name": "www.example.test"])
        _ = fixture.get("/resolve", ["name": "www.example.test", "uid": "nosuch"])
        #expect(counts(fixture) == ["v1": 3, "emas": 3, "json": 2])
    }
}
