import Foundation
import HTTPDNSTestSupport
import Testing

/// Both upstream kinds, failover, local-DNS fallback and total failure.
@Suite("Upstreams")
struct UpstreamTests {
    @Test func dohUpstreamThroughDnssResolves() async throws {
        try await withService(upstreams: { [$0.dnss.upstreamSpec] }, localDNSFallback: false) { servers, service in
            let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=both").json
            #expect(Set(body["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(body["ipsv6"]?.strings == TestZone.wwwV6)
            #expect(body["source"]?.string == "upstream")
            let metrics = try await service.metrics()
            #expect(upstreamRequests(metrics, upstream: servers.dnss.upstreamSpec, outcome: "success") == 2)
        }
    }

    @Test func jsonUpstreamThroughTheResponderResolves() async throws {
        try await withService(upstreams: { [$0.json.upstreamSpec] }, localDNSFallback: false) { servers, service in
            let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=both").json
            #expect(Set(body["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(body["ipsv6"]?.strings == TestZone.wwwV6)
            #expect(body["source"]?.string == "upstream")
            let requests = try await servers.json.requests(for: TestZone.www)
            #expect(
                Set(requests.compactMap { $0.query["type"] }.map { $0.uppercased() })
                    .isSubset(of: ["1", "28", "A", "AAAA"]))
            #expect(requests.count == 2)
            let metrics = try await service.metrics()
            #expect(upstreamRequests(metrics, upstream: servers.json.upstreamSpec, outcome: "success") == 2)
        }
    }

    @Test func jsonUpstreamCNAMEChainTTLIsTheMinimum() async throws {
        try await withService(upstreams: { [$0.json.upstreamSpec] }, localDNSFallback: false) { _, service in
            let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.cnameChain)&type=A").json
            #expect(Set(body["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(body["origin_ttl"]?.int == Int(TestZone.cnameChainTTL))
        }
    }

    @Test func jsonUpstreamNXDOMAINIsNegativeAndCappedByMaxNegativeCache() async throws {
        try await withJSONUpstreamAccount(["maxNegativeCache": 10]) { servers, service in
            let name = TestZone.nxdomain()
            let body = try await service.client.get("/v1/default/resolve?host=\(name)&type=A").json
            #expect(body["nxdomain"]?.bool == true)
            let entry = try await service.client.get("/v1/default/cache?host=\(name)&type=A").json
            #expect((entry["origin_ttl"]?.int ?? 99) <= 10, "\(entry)")
            let metrics = try await service.metrics()
            #expect(upstreamRequests(metrics, upstream: servers.json.upstreamSpec, outcome: "negative") == 1)
        }
    }

    @Test func deadFirstUpstreamFailsOverToTheSecond() async throws {
        let dead = "doh:http://127.0.0.1:\(deadPort())/dns-query"
        try await withService(upstreams: { [dead, $0.dnss.upstreamSpec] }, localDNSFallback: false) { servers, service in
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            #expect(response.status == 200)
            #expect(Set(response.json["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(response.json["source"]?.string == "upstream")
            let metrics = try await service.metrics()
            #expect(upstreamRequests(metrics, upstream: dead, outcome: "transport") >= 1)
            #expect(upstreamRequests(metrics, upstream: servers.dnss.upstreamSpec, outcome: "success") == 1)
        }
    }

    @Test func failingHTTPStatusOfTheFirstUpstreamFailsOverToTheSecond() async throws {
        try await withService(
            upstreams: { [$0.json.upstreamSpec, $0.dnss.upstreamSpec] },
            localDNSFallback: false
        ) { servers, service in
            try await servers.json.setHTTPStatus(500)
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            #expect(response.status == 200)
            #expect(Set(response.json["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            let metrics = try await service.metrics()
            #expect(upstreamRequests(metrics, upstream: servers.json.upstreamSpec, outcome: "http_status") >= 1)
            #expect(upstreamRequests(metrics, upstream: servers.dnss.upstreamSpec, outcome: "success") == 1)
        }
    }

    @Test func allUpstreamsDeadFallsBackToLocalDNSWithAShortTTL() async throws {
        let dead = "doh:http://127.0.0.1:\(deadPort())/dns-query"
        try await withService(upstreams: { _ in [dead] }, localDNSFallback: true) { _, service in
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            #expect(response.status == 200)
            #expect(Set(response.json["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(response.json["source"]?.string == "localdns")
            let ttl = try #require(response.json["ttl"]?.int)
            #expect(ttl > 0 && ttl <= 60)
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_fallback_total", ["outcome": "success"]) == 1)
        }
    }

    @Test func allUpstreamsDeadWithoutFallbackIs502Or504() async throws {
        let dead = ["doh:http://127.0.0.1:\(deadPort())/dns-query", "json:http://127.0.0.1:\(deadPort())/resolve"]
        try await withService(upstreams: { _ in dead }, localDNSFallback: false) { _, service in
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.unique())&type=A")
            #expect([502, 504].contains(response.status), "\(response)")
            let code = response.json["error"]?["code"]?.string
            #expect(code == (response.status == 502 ? "UpstreamFailed" : "UpstreamTimeout"), "\(response)")
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_upstream_requests_total", ["outcome": "transport"]) >= 2)
        }
    }

    @Test func slowUpstreamBeyondTheAccountTimeoutIs504UpstreamTimeout() async throws {
        try await withJSONUpstreamAccount(["timeout": 1]) { servers, service in
            // The upstream would answer after 60 s; the account's 1 s timeout must answer first. The
            // bound separates the two by a margin no load closes.
            try await servers.json.setDelay(milliseconds: 60_000)
            let started = Date()
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.unique())&type=A")
            expectError(response, status: 504, code: "UpstreamTimeout")
            #expect(Date().timeIntervalSince(started) < 30)
            let metrics = try await service.metrics()
            #expect(upstreamRequests(metrics, upstream: servers.json.upstreamSpec, outcome: "timeout") >= 1)
        }
    }
}
