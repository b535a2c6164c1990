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
}
