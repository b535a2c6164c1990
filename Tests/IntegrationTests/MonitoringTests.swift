import Foundation
import HTTPDNSTestSupport
import Testing

/// `/metrics` of the real binary as Prometheus and Grafana read it: histogram buckets and counts
/// after known requests, `promtool check metrics`, and `deploy/monitoring` (dashboard, alert
/// rules and their unit tests, compose file, Debian's prometheus scraping the service).
@Suite("Monitoring")
struct MonitoringTests {
    @Test func requestHistogramsCountKnownRequestsByProtocolEndpointAndSource() async throws {
        try await withService(configure: { _, options in
            options.listen("--ops-listen", port: "ops")
            options.arguments += ["--metrics-accounts", "all"]
        }) { _, service in
            // One miss through the upstream, then three hits (the fast path), one EMAS hit, one
            // DoH JSON hit, one refusal, two probes.
            for _ in 0..<4 { #expect(try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A").status == 200) }
            #expect(try await service.client.get("/default/d?host=\(TestZone.www)").status == 200)
            #expect(try await service.client.get("/resolve?name=\(TestZone.www)").status == 200)
            #expect(try await service.client.get("/v1/default/resolve?host=a..b").status == 400)
            #expect(try await service.client.get("/healthz").status == 200)
            #expect(try await service.client.get("/healthz").status == 200)
            let ops = HTTPClient(port: try service.port(named: "ops"))
            let scrape = try await ops.get("/metrics")
            #expect(scrape.status == 200)
            let metrics = PrometheusText(scrape.text)
            #expect(metrics.types["httpdns_request_duration_seconds"] == "histogram")
            let resolve = ["protocol": "v1", "endpoint": "/v1/{account}/resolve"]
            func count(_ labels: [String: String]) -> Double { metrics.sum("httpdns_request_duration_seconds_count", labels) }
            #expect(count(resolve.merging(["source": "upstream"]) { $1 }) == 1, "\(scrape.text)")
            #expect(count(resolve.merging(["source": "cache"]) { $1 }) == 3)
            #expect(count(resolve.merging(["source": "none"]) { $1 }) == 1)
            #expect(count(["protocol": "emas", "source": "cache"]) == 1)
            #expect(count(["protocol": "json", "source": "cache"]) == 1)
            // The same again under the account's label.
            #expect(count(resolve.merging(["account": "default", "source": "cache"]) { $1 }) == 3)
            // Buckets: cumulative, ending with the count; the upstream miss is slower than 100 µs.
            let upstream = resolve.merging(["source": "upstream"]) { $1 }
            let buckets = metrics.matching("httpdns_request_duration_seconds_bucket", upstream).filter { $0.labels["account"] == nil }
            #expect(
                buckets.map { $0.labels["le"] ?? "" } == [
                    "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5",
                    "5", "10", "+Inf",
                ])
            #expect(zip(buckets, buckets.dropFirst()).allSatisfy { $0.value <= $1.value })
            #expect(buckets.last?.value == 1)
            #expect(buckets.first?.value == 0)
            #expect(metrics.sum("httpdns_request_duration_seconds_sum", upstream) > 0.0001)
            // Upstream durations by upstream and outcome; requests by endpoint; the other families.
            #expect(metrics.sum("httpdns_upstream_request_duration_seconds_count", ["outcome": "success"]) >= 1)
            #expect(metrics.sum("httpdns_http_requests_total", ["endpoint": "/healthz", "code": "200"]) == 2)
            #expect(metrics.sum("httpdns_http_requests_total", ["endpoint": "/v1/{account}/resolve", "code": "200"]) == 4)
            for name in [
                "httpdns_build_info", "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
                "process_start_time_seconds", "httpdns_requests_in_flight", "httpdns_connections_open",
                "httpdns_store_pending_changes", "httpdns_store_database_bytes", "httpdns_ready",
            ] {
                #expect(!metrics.matching(name).isEmpty, "\(name) missing")
            }
            #expect(metrics.sum("process_open_fds") > 5)
            #expect(metrics.sum("httpdns_store_database_bytes") > 0)
            #expect(metrics.sum("httpdns_ready") == 1)
        }
    }

    /// The deploy/monitoring files against this build's scrape; Debian's prometheus scrapes the
    /// service on loopback with the deploy configuration; promtool checks the scrape.
    @Test func deployMonitoringMatchesARealScrapeAndPrometheusScrapesIt() async throws {
        try await withService(configure: { _, options in
            options.listen("--ops-listen", port: "ops")
        }) { _, service in
            let opsPort = try service.port(named: "ops")
            #expect(try await service.client.get("/v1/default/resolve?host=\(TestZone.www)").status == 200)
            #expect(try await service.client.get("/v1/default/resolve?host=\(TestZone.www)").status == 200)
            #expect(
                try await service.client.get("/v1/default/resolve?host=nx-\(UInt32.random(in: 0...UInt32.max)).\(TestZone.origin)").status
                    < 500)
            let scrape = try await HTTPClient(port: opsPort).get("/metrics")
            #expect(scrape.status == 200)
            let directory = try TestPaths.makeTemporaryDirectory("monitoring")
            let file = directory.appendingPathComponent("scrape.txt")
            try Data(scrape.text.utf8).write(to: file)
            let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/monitoring_check.py").path
            let result = try await ExternalTool.run(
                "python3", [script, "--scrape", file.path, "--ops", "127.0.0.1:\(opsPort)"], timeout: 240)
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("promtool check metrics: ok"), "\(result.output)")
            #expect(result.output.contains("promtool test rules alerts.test.yml: ok"), "\(result.output)")
            #expect(result.output.contains("scraped 127.0.0.1:\(opsPort) (up)"), "\(result.output)")
        }
    }
}
