import Foundation
import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSServer

/// `httpdns_request_duration_seconds{protocol,endpoint,source}`: every tenant request recorded
/// once, under the wire API it spoke and what answered it; per-account series bounded by
/// `metricsAccounts`.
@Suite struct RequestDurationMetricsTests {
    private func counts(_ text: MetricsText, by label: String, _ filter: [String: String] = [:]) -> [String: Double] {
        var counts: [String: Double] = [:]
        for sample in text.samples
        where sample.name == "httpdns_request_duration_seconds_count" && sample.labels["account"] == nil
            && filter.allSatisfy({ sample.labels[$0.key] == $0.value })
        {
            counts[sample.labels[label] ?? "?", default: 0] += sample.value
        }
        return counts
    }

    @Test func eachTenantRequestIsRecordedOnceUnderItsProtocolAndSource() {
        let fixture = ServiceFixture()
        fixture.seed([("www.example.test", .a, fixture.entry(["192.0.2.10"]))])
        fixture.upstream.setAnswer("new.example.test", addresses: ["192.0.2.20"], ttl: 60)
        // A fast-path hit; a fast-path miss answered by the full path (A from the cache, AAAA from
        // the upstream: an upstream answer as a whole).
        #expect(fixture.service.fastResponse(MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test")]))?.body != nil)
        #expect(
            fixture.service.fastResponse(MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test"), ("type", "both")]))?.body
                == nil)
        _ = fixture.get("/v1/default/resolve", ["host": "www.example.test", "type": "both"])
        _ = fixture.get("/v1/default/stats")
        // A miss that goes upstream.
        #expect(
            Exchange(
                fixture.handle(HTTPRequest(method: "GET", path: "/v1/default/resolve", query: ["host": "new.example.test", "type": "A"]))
            ).status == 200)
        // EMAS: a hit, a refusal, an unknown account; /healthz is not a tenant request.
        _ = fixture.get("/default/d", ["host": "www.example.test"])
        _ = fixture.get("/default/d", ["host": "bad_name!"])
        _ = fixture.get("/nosuch/resolve", ["host": "www.example.test"])
        _ = fixture.get("/healthz")
        // DoH JSON: a hit of the default account, an unknown uid.
        _ = fixture.get("/resolve", ["name": "www.example.test"])
        _ = fixture.get("/resolve", ["name": "www.example.test", "uid": "nosuch"])
        // RFC 8484: a hit of the default account (www.example.test A), an unknown account, and a
        // POST that is not a DNS message (a path that names no account, timed under its own row).
        #expect(fixture.get("/dns-query", ["dns": "AAABAAABAAAAAAAAA3d3dwdleGFtcGxlBHRlc3QAAAEAAQ"]).status == 200)
        _ = fixture.get("/v1/nosuch/dns-query", ["dns": "AAABAAABAAAAAAAAA3d3dwdleGFtcGxlBHRlc3QAAAEAAQ"])
        #expect(fixture.send("POST", "/dns-query").status == 415)
        let text = MetricsText(fixture.get("/metrics").text)
        #expect(text.problems.isEmpty, "\(text.problems)")
        #expect(text.types["httpdns_request_duration_seconds"] == "histogram")
        #expect(counts(text, by: "protocol") == ["v1": 4, "emas": 3, "json": 2, "rfc8484": 3])
        #expect(counts(text, by: "endpoint", ["protocol": "json"]) == ["/resolve": 2])
        #expect(counts(text, by: "endpoint", ["protocol": "rfc8484"]) == ["/dns-query": 2, "/v1/{account}/dns-query": 1])
        #expect(counts(text, by: "source", ["protocol": "rfc8484"]) == ["cache": 1, "none": 2])
        #expect(counts(text, by: "source", ["protocol": "v1"]) == ["cache": 1, "upstream": 2, "none": 1])
        #expect(counts(text, by: "endpoint", ["protocol": "v1"]) == ["/v1/{account}/resolve": 3, "/v1/{account}/stats": 1])
        #expect(counts(text, by: "source", ["protocol": "emas"]) == ["cache": 1, "none": 2])
        // Buckets are cumulative and end with the count (the one fast-path hit).
        let hits = ["protocol": "v1", "endpoint": "/v1/{account}/resolve", "source": "cache"]
        #expect(text.value("httpdns_request_duration_seconds_bucket", hits.merging(["le": "+Inf"]) { $1 }) == 1)
        #expect(text.value("httpdns_request_duration_seconds_bucket", hits.merging(["le": "10"]) { $1 }) == 1)
    }

    @Test func withHistogramsOffNothingIsRecorded() {
        var limits = HTTPDNSService.Limits()
        limits.requestDurations = false
        let fixture = ServiceFixture(limits: limits)
        fixture.seed([("www.example.test", .a, fixture.entry(["192.0.2.10"]))])
        #expect(fixture.service.fastResponse(MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test")]))?.body != nil)
        _ = fixture.get("/v1/default/resolve", ["host": "www.example.test", "type": "A"])
        let text = MetricsText(fixture.get("/metrics").text)
        #expect(text.problems.isEmpty, "\(text.problems)")
        #expect(text.sum("httpdns_request_duration_seconds_count") == 0)
        #expect(text.value("httpdns_cache_hits_total") == 2)
    }

    private func manyAccounts(_ mode: MetricsAccounts, count: Int = 300) -> ServiceFixture {
        var limits = HTTPDNSService.Limits()
        limits.metricsAccounts = mode
        let fixture = ServiceFixture(limits: limits)
        for index in 0..<count { fixture.registry.upsert("tenant\(index)", config: .test()) }
        return fixture
    }

    private func accounts(_ text: String) -> Set<String> {
        Set(MetricsText(text).samples.compactMap { $0.labels["account"] })
    }

    @Test func noneShowsTotalsOnlyWhateverTheNumberOfAccounts() {
        let all = manyAccounts(.all)
        let none = manyAccounts(.none)
        for fixture in [all, none] {
            fixture.upstream.setAnswer("www.example.test", addresses: ["192.0.2.10"], ttl: 60)
            _ = fixture.get("/v1/tenant7/resolve", ["host": "www.example.test"])
        }
        let allText = all.get("/metrics", listener: .ops).text
        let noneText = none.get("/metrics", listener: .ops).text
        #expect(accounts(allText).count == 301)
        #expect(accounts(noneText).isEmpty)
        #expect(noneText.utf8.count * 20 < allText.utf8.count, "\(noneText.utf8.count) vs \(allText.utf8.count) bytes")
        let totals = MetricsText(noneText)
        #expect(totals.problems.isEmpty, "\(totals.problems)")
        #expect(totals.value("httpdns_resolve_requests_total") == 1)
        #expect(totals.sum("httpdns_request_duration_seconds_count") == 1)
    }

    @Test func activeShowsTheAccountsWithLookupsSinceThePreviousScrape() {
        let fixture = manyAccounts(.active)
        fixture.upstream.setAnswer("www.example.test", addresses: ["192.0.2.10"], ttl: 60)
        _ = fixture.get("/v1/tenant7/resolve", ["host": "www.example.test"])
        _ = fixture.get("/v1/tenant9/resolve", ["host": "www.example.test"])
        let first = fixture.get("/metrics", listener: .ops).text
        #expect(accounts(first) == ["tenant7", "tenant9"])
        _ = fixture.get("/v1/tenant9/resolve", ["host": "www.example.test"])
        let second = fixture.get("/metrics", listener: .ops).text
        #expect(accounts(second) == ["tenant9"])
        let third = MetricsText(fixture.get("/metrics", listener: .ops).text)
        #expect(Set(third.samples.compactMap { $0.labels["account"] }).isEmpty)
        #expect(third.value("httpdns_resolve_requests_total") == 3, "totals stay")
        // The public listener never shows accounts.
        _ = fixture.get("/v1/tenant3/resolve", ["host": "www.example.test"])
        #expect(accounts(fixture.get("/metrics").text).isEmpty)
    }

    @Test func aPreloadIsTimedAndAccountsWithoutOneShowNoEmptyPreloadHistogram() {
        let fixture = ServiceFixture()
        fixture.registry.upsert("quiet", config: .test())
        fixture.upstream.setAnswer("warm.example.test", addresses: ["127.0.0.1"], ttl: 60)
        let preload = fixture.send("POST", "/v1/default/preload", body: Array(#"{"hosts":["warm.example.test"],"type":"A"}"#.utf8))
        #expect(preload.status == 200)
        let text = MetricsText(fixture.get("/metrics", listener: .ops).text)
        #expect(text.problems.isEmpty, "\(text.problems)")
        #expect(text.value("httpdns_preload_duration_seconds_count") == 1)
        #expect(text.value("httpdns_preload_duration_seconds_count", ["account": "default"]) == 1)
        #expect(text.value("httpdns_preload_duration_seconds_count", ["account": "quiet"]) == nil)
        #expect(text.value("httpdns_resolve_requests_total", ["account": "quiet"]) == 0, "counters stay for every account")
        #expect(text.sum("httpdns_request_duration_seconds_count", ["endpoint": "/v1/{account}/preload"]) == 1)
    }
}
