import Foundation
import HTTPDNSTestSupport
import Testing

/// Routing, methods, limits and the operational endpoints.
@Suite("HTTP surface")
struct HTTPSurfaceTests {
    @Test func unknownPathIs404NotFound() async throws {
        try await withService { _, service in
            expectError(try await service.client.get("/no/such/path"), status: 404, code: "NotFound")
            expectError(try await service.client.get("/v1/default/nosuchendpoint"), status: 404, code: "NotFound")
        }
    }

    @Test func wrongMethodIs405WithAllowHeader() async throws {
        try await withService { _, service in
            let response = try await service.client.request("PUT", "/v1/default/resolve?host=\(TestZone.www)", body: [])
            expectError(response, status: 405, code: "MethodNotAllowed")
            let allow = try #require(response.header("allow"), "no Allow header in \(response.headers)")
            #expect(allow.contains("GET"))
            #expect(!allow.contains("PUT"))
            let preload = try await service.client.get("/v1/default/preload")
            expectError(preload, status: 405, code: "MethodNotAllowed")
            #expect(preload.header("allow")?.contains("POST") == true)
        }
    }

    @Test func bodyOverTheLimitIs413PayloadTooLarge() async throws {
        try await withService(configure: { servers, options in
            options.config = ["maxBodyBytes": 1024, "accounts": ["default": loopbackAccount(servers)]]
        }) { servers, service in
            let hosts = (0..<200).map { TestZone.unique("big\($0)") }
            let body: TestJSON = ["hosts": .array(hosts.map { .string($0) }), "type": "A"]
            #expect(body.encoded().utf8.count > 4096)
            let before = try await servers.unbound.queryCount()
            let response = try await service.client.post("/v1/default/preload", json: body)
            expectError(response, status: 413, code: "PayloadTooLarge")
            #expect(try await servers.unbound.queryCount() == before)
            // A body under the limit is still accepted afterwards.
            let small = try await service.client.post("/v1/default/preload", json: ["hosts": [.string(TestZone.www)]])
            #expect(small.status == 200)
        }
    }

    @Test func healthzAndReadyzAnswerOK() async throws {
        try await withService { _, service in
            let health = try await service.client.get("/healthz")
            #expect(health.status == 200)
            #expect(health.json["status"]?.string == "ok")
            let ready = try await service.client.get("/readyz")
            #expect(ready.status == 200)
            #expect(ready.json["status"]?.string == "ready")
        }
    }

    @Test func metricsArePrometheusTextWithHelpAndType() async throws {
        try await withService { _, service in
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)")
            let response = try await service.client.get("/metrics")
            #expect(response.status == 200)
            #expect(response.header("content-type")?.hasPrefix("text/plain") == true)
            let metrics = PrometheusText(response.text)
            for name in [
                "httpdns_http_requests_total", "httpdns_resolve_requests_total",
                "httpdns_cache_hits_total", "httpdns_cache_misses_total",
                "httpdns_cache_negative_hits_total", "httpdns_upstream_requests_total",
                "httpdns_fallback_total", "httpdns_singleflight_joined_total",
            ] {
                #expect(metrics.types[name] == "counter", "\(name) type")
                #expect(metrics.helped.contains(name), "\(name) help")
            }
            #expect(metrics.types["httpdns_cache_entries"] == "gauge")
            #expect(metrics.sum("httpdns_http_requests_total", ["code": "200"]) >= 1)
            #expect(metrics.sum("httpdns_resolve_requests_total", [:]) >= 1)
            #expect(metrics.sum("httpdns_cache_entries", [:]) >= 1)
        }
    }

    @Test func twoHundredConcurrentRequestsForOneNewNameMakeExactlyOneUpstreamQuery() async throws {
        // 200 clients from one address: lift the per-address connection limit (default 64).
        try await withService(
            upstreams: { [$0.json.upstreamSpec] },
            configure: { _, options in
                options.arguments += ["--per-ip-connection-limit", "0"]
            }
        ) { servers, service in
            try await servers.json.setDelay(milliseconds: 400)  // keep the first query in flight
            let name = TestZone.unique("flight")
            let client = service.client
            let statuses = try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        let response = try await client.get("/v1/default/resolve?host=\(name)&type=A")
                        return (response.status, response.json["ips"]?.strings ?? [])
                    }
                }
                var all: [(Int, [String])] = []
                for try await result in group { all.append(result) }
                return all
            }
            #expect(statuses.count == 200)
            #expect(statuses.allSatisfy { $0.0 == 200 && $0.1 == TestZone.wildV4 })
            #expect(try await servers.json.requests(for: name).count == 1)
            let metrics = try await service.metrics()
            #expect(upstreamRequests(metrics, upstream: servers.json.upstreamSpec) == 1)
            #expect(
                metrics.sum("httpdns_singleflight_joined_total", [:])
                    + metrics.sum("httpdns_cache_hits_total", [:]) == 199)
        }
    }
}
