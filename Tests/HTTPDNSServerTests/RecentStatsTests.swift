import Foundation
import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// `GET /v1/{account}/stats/recent`: the account's last hour, a point a sample, the minute in
/// progress last.
@Suite struct RecentStatsTests {
    @Test func theLastHourListsEachSampledMinuteAndTheOneInProgress() throws {
        let fixture = ServiceFixture()
        fixture.seed([("www.example.test", .a, fixture.entry(["192.0.2.1"]))])
        let metrics = fixture.engine.metrics
        metrics.recent.sample(metrics.activityTotals, at: fixture.clock.now())
        for _ in 0..<3 { #expect(fixture.get("/v1/default/resolve", ["host": "www.example.test"]).status == 200) }
        fixture.clock.advance(by: 60)
        metrics.recent.sample(metrics.activityTotals, at: fixture.clock.now())
        #expect(fixture.get("/v1/default/resolve", ["host": "www.example.test"]).status == 200)
        fixture.clock.advance(by: 20)

        let exchange = fixture.get("/v1/default/stats/recent")
        #expect(exchange.status == 200)
        let points = try #require(exchange.object["points"] as? [[String: Any]])
        #expect(points.count == 2)
        #expect(points.map { number($0["lookups"]) } == [3, 1])
        #expect(points.map { number($0["hits"]) } == [3, 1])
        #expect(points.map { number($0["seconds"]) } == [60, 20])
        #expect(number(points[1]["start"]) == number(points[0]["start"])! + 60)
        #expect(fixture.get("/v1/default/stats/recent", ["limit": "5"]).status == 400)
    }

    /// Each point has the latency percentiles of the lookup requests timed in it, taken from the
    /// difference of the account's request-duration histograms (the statistics requests
    /// themselves, which look nothing up, are not in it).
    @Test func eachPointHasTheLatencyOfItsLookupRequests() throws {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("www.example.test", addresses: ["192.0.2.1"], ttl: 300)
        let metrics = fixture.engine.metrics
        #expect(metrics.lookupDurations == nil)
        metrics.recent.sample(metrics.activityTotals, durations: metrics.lookupDurations, at: fixture.clock.now())
        #expect(fixture.get("/v1/default/resolve", ["host": "www.example.test"]).status == 200)
        #expect(fixture.get("/v1/default/stats/recent").status == 200)
        // Beside the real request (well under 2.5 s), one of 3 s that asked an upstream, and a
        // 9 s request that looked nothing up, which is not a lookup's latency.
        let resolve = RouteTable.standard.route("GET", "/v1/{account}/resolve")
        let stats = RouteTable.standard.route("GET", "/v1/{account}/stats/recent")
        metrics.requestDurationRecorder.record(slot: RequestDurations.slot(resolve, source: .upstream), nanoseconds: 3_000_000_000)
        metrics.requestDurationRecorder.record(slot: RequestDurations.slot(stats, source: nil), nanoseconds: 9_000_000_000)
        fixture.clock.advance(by: 60)
        metrics.recent.sample(metrics.activityTotals, durations: metrics.lookupDurations, at: fixture.clock.now())
        for _ in 0..<4 { #expect(fixture.get("/v1/default/resolve", ["host": "www.example.test"]).status == 200) }
        fixture.clock.advance(by: 20)

        let exchange = fixture.get("/v1/default/stats/recent")
        let points = try #require(exchange.object["points"] as? [[String: Any]])
        #expect(points.count == 2)
        let latencies = try points.map { try #require($0["latency"] as? [String: Any]) }
        #expect(latencies.map { number($0["requests"]) } == [2, 4])
        // Rank 1.98 of 2 is 98 % into the 3 s request's bucket, (2.5 s, 5 s].
        #expect(number(latencies[0]["p99Us"]) == 4_950_000)
        for latency in latencies {
            let p50 = try #require(number(latency["p50Us"])), p95 = try #require(number(latency["p95Us"]))
            let p99 = try #require(number(latency["p99Us"]))
            #expect(0 < p50 && p50 <= p95 && p95 <= p99)
        }
        #expect(exchange.text.range(of: #""p99Us":[0-9]+\}"#, options: .regularExpression) != nil, "whole microseconds")
    }
}
