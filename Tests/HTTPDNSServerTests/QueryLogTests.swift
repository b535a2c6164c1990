import HTTPDNSCore
import HTTPDNSCrypto
import HTTPDNSWire
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
        // The type asked: none, so `auto`, as the general path and the API's documentation have it.
        #expect(entry.host == "two.example.test" && entry.type == "auto" && entry.format == "v1")
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

    /// An AAAA query for `new.example.test`, base64url.
    private static let aaaaQuery = Base64URL.encode(try! DNSQueryWriter.query(name: "new.example.test", type: 28, id: 7, clientSubnet: nil))

    /// A request of each format the fast path reads is logged with the same name, type, format
    /// and client whether the general path answers it, the fast path looks its miss up, or the
    /// fast path answers its hit; the type is the one asked, as the general path writes it.
    @Test(
        arguments: [
            ("/v1/default/resolve", [("host", "new.example.test")], "auto"),
            ("/v1/default/resolve", [("host", "New.example.test"), ("type", "aaaa")], "AAAA"),
            ("/v1/default/resolve", [("host", "new.example.test"), ("type", "")], "auto"),
            ("/default/d", [("host", "new.example.test")], "A"),
            ("/default/d", [("host", "new.example.test"), ("query", "6")], "AAAA"),
            ("/resolve", [("name", "new.example.test"), ("type", "1")], "1"),
            ("/resolve", [("name", "new.example.test")], "A"),
            ("/dns-query", [("dns", Self.aaaaQuery)], "AAAA"),
        ] as [(String, [(String, String?)], String)])
    func everyPathLogsTheQuestionAsAsked(path: String, arguments: [(String, String?)], type: String) throws {
        let head = MemoryHead("GET", path, arguments, peer: "198.51.100.77")
        func answering() -> ServiceFixture {
            let fixture = fixture(Self.on)
            fixture.upstream.setAnswer("new.example.test", addresses: ["192.0.2.20"], ttl: 60)
            fixture.upstream.setAnswer("new.example.test", .aaaa, addresses: ["2001:db8::20"], ttl: 60)
            return fixture
        }
        func logged(_ fixture: ServiceFixture) throws -> QueryLogEntry {
            let entries = fixture.service.queryLog.drain().map { $0.completed() }
            #expect(entries.count == 1)
            return try #require(entries.first)
        }
        let general = answering()
        #expect(Exchange(general.service.handle(head.request()), releasing: general.upstreams).awaited().status == 200)
        let expected = try logged(general)
        #expect(expected.type == type && expected.source == "upstream")
        let fast = answering()
        guard case .lookup(let result)? = fast.service.fastPath(head) else {
            Issue.record("the fast path left the miss to the general path")
            return
        }
        #expect(Exchange(result, releasing: fast.upstreams).awaited().status == 200)
        let miss = try logged(fast)
        #expect(fast.service.fastResponse(head)?.count != nil)
        let hit = try logged(fast)
        for entry in [miss, hit] {
            #expect(entry.host == expected.host && entry.type == type && entry.format == expected.format, "\(entry)")
            #expect(entry.client == expected.client && entry.status == 200 && entry.rcode == expected.rcode)
        }
        #expect(miss.source == "upstream" && hit.source == "cache")
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
