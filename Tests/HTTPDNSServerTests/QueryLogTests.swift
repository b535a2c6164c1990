import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// The query log's side of the pipeline: both paths log a lookup at one point, masked and only
/// for accounts with the log on; `/querylog` refuses bad arguments naming them.
@Suite struct QueryLogTests {
    private func fixture(_ queryLog: QueryLogSettings?) -> ServiceFixture {
        let fixture = ServiceFixture(config: .test { if let queryLog { $0.queryLog = queryLog } })
        fixture.seed([("two.example.test", .a, fixture.entry(["127.0.0.11"], ttl: 300))])
        return fixture
    }

    private static var on: QueryLogSettings {
        var settings = QueryLogSettings()
        settings.enabled = true
        return settings
    }

    @Test func aFastHitIsLoggedWithTheMaskedClient() throws {
        let fixture = fixture(Self.on)
        let head = MemoryHead("GET", "/v1/default/resolve", [("host", "two.example.test")], peer: "198.51.100.77")
        #expect(fixture.service.fastResponse(head)?.count ?? 0 > 0)
        let entries = fixture.service.queryLog.drain().map { $0.completed() }
        let entry = try #require(entries.first)
        #expect(entries.count == 1)
        #expect(entry.host == "two.example.test" && entry.type == "A" && entry.format == "v1")
        #expect(entry.client == "198.51.100.0/24")
        #expect(entry.source == "cache" && entry.status == 200 && entry.rcode == "")
        #expect(entry.account == "default")
        #expect(entry.expires == entry.time + 86_400)
    }

    @Test func theGeneralPathLogsAtTheSamePoint() throws {
        let fixture = fixture(Self.on)
        // A batch is the general path's.
        let exchange = fixture.get("/v1/default/resolve", ["host": "two.example.test,x.example.test"], peer: "2001:db8:1:2ff::1")
            .awaited()
        #expect(exchange.status == 200)
        let entry = try #require(fixture.service.queryLog.drain().map { $0.completed() }.first)
        #expect(entry.host == "two.example.test,x.example.test" && entry.type == "auto")
        #expect(entry.client == "2001:db8:1:200::/56")
        #expect(entry.source == "upstream")
        // A refusal is logged with its status.
        #expect(fixture.get("/v1/default/resolve", ["host": "bad name"], peer: "198.51.100.1").status == 400)
        let refused = try #require(fixture.service.queryLog.drain().map { $0.completed() }.first)
        #expect(refused.status == 400 && refused.source == "invalid")
    }

    @Test func anAccountWithoutTheLogQueuesNothing() {
        let fixture = fixture(nil)
        let head = MemoryHead("GET", "/v1/default/resolve", [("host", "two.example.test")], peer: "198.51.100.77")
        #expect(fixture.service.fastResponse(head)?.count ?? 0 > 0)
        #expect(fixture.get("/v1/default/resolve", ["host": "two.example.test,x.example.test"]).awaited().status == 200)
        #expect(fixture.service.queryLog.pending == 0)
        var never = Self.on
        never.sampleRate = 0
        let sampled = self.fixture(never)
        #expect(sampled.service.fastResponse(head)?.count ?? 0 > 0)
        #expect(sampled.service.queryLog.pending == 0)
    }

    @Test(arguments: [
        (["limit": "0"], "limit"), (["limit": "1001"], "limit"), (["since": "yesterday"], "since"), (["host": "a b"], "host"),
        (["status": "99"], "status"), (["cursor": "q1.5~00000000"], "cursor"),
    ])
    func badArgumentsAreRefusedNamingThem(query: [String: String], name: String) {
        let exchange = fixture(Self.on).get("/v1/default/querylog", query)
        #expect(exchange.status == 400)
        #expect(exchange.errorMessage?.hasPrefix(name) == true, "\(exchange.errorMessage ?? "")")
    }

    @Test func aCursorIsBoundToItsAccountAndFilters() throws {
        let query = QueryLogQuery(account: "default", host: "a.test", limit: 10)
        let page = QueryLogPage(entries: [], next: 12_345_678_901)
        let body = QueryLogHandler.response(page, query: query, labelled: false).bodyText
        let cursor = try #require(body.split(separator: "\"").dropLast().last.map(String.init))
        var request = HTTPRequest(method: "GET", path: "/v1/default/querylog", query: ["host": "a.test", "cursor": cursor])
        #expect(try QueryLogHandler.query(request, account: "default").before == 12_345_678_901)
        #expect(throws: APIError.self) { try QueryLogHandler.query(request, account: "other") }
        #expect(throws: APIError.self) { try QueryLogHandler.query(request, account: nil) }
        request.query = QueryArguments(["host": "b.test", "cursor": cursor])
        #expect(throws: APIError.self) { try QueryLogHandler.query(request, account: "default") }
    }

    @Test func withoutAStoreTheLogIsUnavailable() {
        #expect(fixture(Self.on).get("/v1/default/querylog").status == 503)
    }
}
