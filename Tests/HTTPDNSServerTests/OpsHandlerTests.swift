import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSServer

/// `/healthz`, `/readyz` and `/metrics`.
@Suite struct OpsHandlerTests {
    @Test func healthzIsAlwaysOK() {
        let fixture = ServiceFixture()
        let exchange = fixture.get("/healthz")
        #expect(exchange.status == 200)
        #expect(exchange.object["status"] as? String == "ok")
    }

    @Test func readyzIs503UntilReadyThen200AndAgain503WhenNoLongerReady() {
        let fixture = ServiceFixture()
        let before = fixture.get("/readyz")
        #expect(before.status == 503)
        #expect(before.errorCode == "ServiceUnavailable")
        fixture.service.isReady = true
        let ready = fixture.get("/readyz")
        #expect(ready.status == 200)
        #expect(ready.object["status"] as? String == "ready")
        fixture.service.isReady = false
        #expect(fixture.get("/readyz").status == 503)
    }

    @Test func readyzStaysReadyWithAFailingStoreAndSaysWhyInItsBody() throws {
        let fixture = ServiceFixture()
        fixture.service.isReady = true
        let failing = PersistenceHealth(
            healthy: false, pendingChanges: 12, lastError: "full (SQLite result code 13)", failingSince: 1_700_000_000)
        fixture.service.setStoreHealth { failing }
        let degraded = fixture.get("/readyz")
        #expect(degraded.status == 200)
        #expect(degraded.object["status"] as? String == "degraded")
        let store = try #require(degraded.object["store"] as? [String: Any])
        #expect(store["healthy"] as? Bool == false)
        #expect(number(store["pendingChanges"]) == 12)
        #expect(store["error"] as? String == "full (SQLite result code 13)")
        #expect(number(store["failingSince"]) == 1_700_000_000)

        fixture.service.setStoreHealth { PersistenceHealth(healthy: true) }
        let ready = fixture.get("/readyz")
        #expect(ready.object["status"] as? String == "ready")
        #expect((ready.object["store"] as? [String: Any])?["healthy"] as? Bool == true)
    }

    @Test func metricsIsPrometheusTextWithHelpAndTypeBeforeEverySample() {
        let fixture = ServiceFixture()
        fixture.registry.upsert("other", config: .test())
        let metrics = HTTPMetrics()
        fixture.service.attach(metrics)
        metrics.record(status: 200, endpoint: RouteTable.standard.route("GET", "/v1/{account}/resolve").endpoint)
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.1"], ttl: 60)
        _ = fixture.get("/v1/default/resolve", ["host": "www.example.test"])
        let exchange = fixture.get("/metrics", listener: .ops)
        #expect(exchange.status == 200)
        #expect(exchange.response?.contentType.hasPrefix("text/plain; version=0.0.4") == true)
        let text = MetricsText(exchange.text)
        #expect(text.problems.isEmpty, "\(text.problems)")
        for family in [
            "httpdns_http_requests_total", "httpdns_resolve_requests_total", "httpdns_cache_hits_total", "httpdns_cache_misses_total",
            "httpdns_cache_negative_hits_total", "httpdns_upstream_requests_total", "httpdns_fallback_total",
            "httpdns_singleflight_joined_total", "httpdns_cache_entries",
        ] {
            #expect(text.types[family] != nil, "\(family) is missing")
        }
        #expect(text.types["httpdns_cache_entries"] == "gauge")
        #expect(text.types["httpdns_resolve_requests_total"] == "counter")
        #expect(text.value("httpdns_resolve_requests_total", ["account": "other"]) == 0)
        #expect(text.value("httpdns_http_requests_total", ["endpoint": "/v1/{account}/resolve", "code": "200"]) == 1)
    }

    @Test func countersMoveWithRequests() {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.1"], ttl: 60)
        fixture.upstream.setReply("gone.example.test", .a, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true)))
        fixture.upstream.setFailure("down.example.test", .a, .timeout)
        let account = ["account": "default"]
        let before = MetricsText(fixture.get("/metrics", listener: .ops).text)
        #expect(before.value("httpdns_resolve_requests_total", account) == 0)
        #expect(before.value("httpdns_cache_entries", account) == 0)

        for host in [
            "www.example.test", "www.example.test", "www.example.test", "gone.example.test", "gone.example.test", "down.example.test",
        ] {
            _ = fixture.get("/v1/default/resolve", ["host": host])
        }
        let after = MetricsText(fixture.get("/metrics", listener: .ops).text)
        #expect(after.problems.isEmpty, "\(after.problems)")
        #expect(after.value("httpdns_resolve_requests_total", account) == 6)
        #expect(after.value("httpdns_cache_hits_total", account) == 3)
        #expect(after.value("httpdns_cache_misses_total", account) == 3)
        #expect(after.value("httpdns_cache_negative_hits_total", account) == 1)
        #expect(after.value("httpdns_cache_entries", account) == 2)
        #expect(after.value("httpdns_upstream_requests_total", ["account": "default", "upstream": "memory-0", "outcome": "success"]) == 1)
        #expect(after.value("httpdns_upstream_requests_total", ["account": "default", "upstream": "memory-0", "outcome": "negative"]) == 1)
        #expect(after.value("httpdns_upstream_requests_total", ["account": "default", "upstream": "memory-0", "outcome": "timeout"]) == 1)
    }

    @Test func fallbackAndSingleFlightCountersMove() {
        let fixture = ServiceFixture(config: .test { $0.localDNSFallback = true })
        fixture.upstream.setFailure("fb.example.test", .a, .transport)
        fixture.fallback.setAnswer("fb.example.test", .a, addresses: ["127.0.0.9"], ttl: nil)
        fixture.upstream.setFailure("none.example.test", .a, .transport)
        fixture.fallback.setFailure("none.example.test", .a, .transport)
        fixture.upstream.setAnswer("hot.example.test", addresses: ["127.0.0.1"], ttl: 60)
        _ = fixture.get("/v1/default/resolve", ["host": "fb.example.test"])
        _ = fixture.get("/v1/default/resolve", ["host": "none.example.test"])
        fixture.upstream.holdReplies(true)
        let results = (0..<3).map { _ in
            fixture.handle(HTTPRequest(method: "GET", path: "/v1/default/resolve", query: ["host": "hot.example.test"]))
        }
        let exchanges = results.map { Exchange($0, releasing: [fixture.upstream]) }
        #expect(exchanges.allSatisfy { $0.status == 200 })
        let text = MetricsText(fixture.get("/metrics", listener: .ops).text)
        #expect(text.value("httpdns_fallback_total", ["account": "default", "outcome": "success"]) == 1)
        #expect(text.value("httpdns_fallback_total", ["account": "default", "outcome": "failure"]) == 1)
        #expect(text.value("httpdns_singleflight_joined_total", ["account": "default"]) == 2)
        #expect(text.value("httpdns_upstream_requests_total", ["account": "default", "upstream": "memory-0", "outcome": "transport"]) == 2)
    }

    /// On the public listener the account ids would list the tenants: each family is summed
    /// over the accounts instead, with its other labels kept.
    @Test func publicListenerMetricsCarryNoAccountIDsAndSumOverAccounts() {
        let fixture = ServiceFixture()
        fixture.registry.upsert("secret-tenant", config: .test())
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.1"], ttl: 60)
        _ = fixture.get("/v1/default/resolve", ["host": "www.example.test"])
        _ = fixture.get("/v1/secret-tenant/resolve", ["host": "www.example.test"])
        _ = fixture.get("/v1/secret-tenant/resolve", ["host": "www.example.test"])
        let exchange = fixture.get("/metrics")
        #expect(!exchange.text.contains("secret-tenant"))
        #expect(!exchange.text.contains("account="))
        let text = MetricsText(exchange.text)
        #expect(text.problems.isEmpty, "\(text.problems)")
        #expect(text.value("httpdns_resolve_requests_total") == 3)
        #expect(text.value("httpdns_cache_hits_total") == 1)
        #expect(text.value("httpdns_upstream_requests_total", ["upstream": "memory-0", "outcome": "success"]) == 2)
        #expect(text.value("httpdns_rate_limited_total", ["reason": "client_rate"]) == 0)

        let ops = MetricsText(fixture.get("/metrics", listener: .ops).text)
        #expect(ops.value("httpdns_resolve_requests_total", ["account": "secret-tenant"]) == 2)
        #expect(ops.value("httpdns_resolve_requests_total", ["account": "default"]) == 1)
    }

    @Test func extraMetricsSourcesAreAppended() {
        let fixture = ServiceFixture()
        let flushes = MetricDescriptor("httpdns_store_flushes_total", .counter, help: "Flushes.")
        fixture.service.addMetricsSource { $0.sample(flushes, [], 7) }
        let text = MetricsText(fixture.get("/metrics", listener: .ops).text)
        #expect(text.problems.isEmpty, "\(text.problems)")
        #expect(text.value("httpdns_store_flushes_total") == 7)
    }

    /// A source adding to a family the service already wrote keeps it one family.
    @Test func aSourceAddingToAServiceFamilyKeepsOneHeader() {
        let fixture = ServiceFixture()
        fixture.service.addMetricsSource { $0.sample(MetricsExposition.cacheEntries, ["extra"], 5) }
        let text = MetricsText(fixture.get("/metrics", listener: .ops).text)
        #expect(text.problems.isEmpty, "\(text.problems)")
        #expect(text.value("httpdns_cache_entries", ["account": "extra"]) == 5)
    }

    @Test func upstreamLabelValuesAreEscaped() {
        var out = MetricsEmitter()
        out.sample(MetricsExposition.upstreamRequests, ["", "q\"\\\n", "success"], 3)
        let text = MetricsText(out.text)
        #expect(text.problems.isEmpty, "\(text.problems)")
        #expect(text.value("httpdns_upstream_requests_total", ["upstream": "q\"\\\n", "outcome": "success"]) == 3)
    }

    /// The reader above is only worth something if it rejects what Prometheus rejects.
    @Test func theStrictReaderFlagsMissingHeadersAndInterleavedFamilies() {
        #expect(!MetricsText("a_total 1\n").problems.isEmpty)
        #expect(!MetricsText("# TYPE a_total counter\na_total 1\n").problems.isEmpty)
        #expect(!MetricsText("# HELP a_total A.\n# TYPE a_total counter\n# HELP b B.\n# TYPE b gauge\nb 1\na_total 1\n").problems.isEmpty)
        #expect(!MetricsText("# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1} 1\n").problems.isEmpty)
        #expect(MetricsText("# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 1\n").problems.isEmpty)
    }
}
