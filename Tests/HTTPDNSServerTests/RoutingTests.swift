import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// Which handler a method and path reach, and the errors for everything else.
@Suite struct RoutingTests {
    @Test(arguments: [
        "/", "/v1", "/v1/default", "/v1/default/unknown", "/v2/default/resolve", "/v1/default/resolve/extra", "/healthz/x", "/nothing",
    ])
    func unknownPathIs404NotFound(path: String) {
        let fixture = ServiceFixture(adminToken: "t")
        let exchange = fixture.get(path)
        #expect(exchange.status == 404)
        #expect(exchange.errorCode == "NotFound")
        #expect(exchange.response?.contentType == ServerResponse.jsonType)
    }

    @Test(arguments: [
        ("POST", "/v1/default/resolve", "GET"),
        ("DELETE", "/v1/default/resolve", "GET"),
        ("GET", "/v1/default/preload", "POST"),
        ("PUT", "/v1/default/preload", "POST"),
        ("POST", "/v1/default/stats", "GET"),
        ("PUT", "/v1/default/cache", "GET, DELETE"),
        ("POST", "/v1/default/cache", "GET, DELETE"),
        ("POST", "/healthz", "GET"),
        ("DELETE", "/readyz", "GET"),
        ("POST", "/metrics", "GET"),
    ])
    func wrongMethodIs405WithAllowListingTheRightMethods(method: String, path: String, allow: String) {
        let fixture = ServiceFixture()
        let exchange = fixture.send(method, path)
        #expect(exchange.status == 405)
        #expect(exchange.errorCode == "MethodNotAllowed")
        #expect(exchange.header("Allow") == allow)
    }

    @Test(arguments: [
        ("POST", "/v1/accounts", "GET"),
        ("PATCH", "/v1/accounts/default", "GET, PUT, DELETE"),
        ("POST", "/v1/accounts/default", "GET, PUT, DELETE"),
    ])
    func wrongMethodOnAdminPathsIs405AfterAuthentication(method: String, path: String, allow: String) {
        let fixture = ServiceFixture(adminToken: "secret-token")
        let exchange = fixture.send(method, path, authorization: "Bearer secret-token")
        #expect(exchange.status == 405)
        #expect(exchange.errorCode == "MethodNotAllowed")
        #expect(exchange.header("Allow") == allow)
    }

    @Test(arguments: ["resolve", "cache", "preload", "stats"])
    func unknownAccountIs404UnknownAccount(operation: String) {
        let fixture = ServiceFixture()
        let method = operation == "preload" ? "POST" : "GET"
        let exchange = fixture.send(
            method, "/v1/nobody/\(operation)", query: ["host": "www.example.test"], body: Array(#"{"hosts":["a.test"]}"#.utf8))
        #expect(exchange.status == 404)
        #expect(exchange.errorCode == "UnknownAccount")
        #expect(exchange.errorMessage?.contains("nobody") == true)
        #expect(fixture.upstream.totalCalls == 0)
    }

    @Test func aSecondAccountIsRoutedToItsOwnEngine() {
        let fixture = ServiceFixture()
        fixture.registry.upsert("other", config: .test())
        fixture.seed([("only.other.test", .a, fixture.entry(["127.0.0.7"]))], account: "other")
        let other = fixture.get("/v1/other/cache", ["host": "only.other.test"])
        let main = fixture.get("/v1/default/cache", ["host": "only.other.test"])
        #expect(other.status == 200)
        #expect(strings(other.object["ips"]) == ["127.0.0.7"])
        #expect(main.status == 404)
    }

    @Test func errorMessagesWithQuotesAndBackslashesAreEscapedJSON() {
        let fixture = ServiceFixture()
        // (No control character: an argument holding one is refused before it is read.)
        let host = "bad\"name\\with quote"
        let exchange = fixture.get("/v1/default/resolve", ["host": host])
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidHost")
        // The body parses, and the message carries the name unchanged.
        #expect(exchange.errorMessage?.contains(host) == true)
        #expect(exchange.text.contains(#"bad\"name\\with quote"#))
    }

    @Test func everyResponseIsJSONWithACharset() {
        let fixture = ServiceFixture(adminToken: "t")
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.1"]))])
        for exchange in [
            fixture.get("/healthz"), fixture.get("/readyz"), fixture.get("/v1/default/stats"),
            fixture.get("/v1/default/resolve", ["host": "www.example.test"]), fixture.get("/v1/default/cache"),
            fixture.get("/v1/accounts"), fixture.get("/nope"),
        ] {
            #expect(exchange.response?.contentType == "application/json; charset=utf-8")
            #expect(exchange.json != nil, "body is not JSON: \(exchange.text)")
        }
    }
}

@Suite struct PathSegmentsTests {
    private func parsed(_ path: String) -> PathSegments {
        var path = path
        return path.withUTF8 { PathSegments(UnsafeRawBufferPointer($0)) }
    }

    private func segments(_ path: String) -> [String] {
        let parsed = parsed(path)
        return (0..<min(parsed.count, PathSegments.capacity)).map { parsed.text($0, of: path) }
    }

    @Test func emptySegmentsAreSkippedLikeSplit() {
        #expect(segments("/v1/default/resolve") == ["v1", "default", "resolve"])
        #expect(segments("//v1///default/") == ["v1", "default"])
        #expect(segments("/") == [])
        #expect(segments("") == [])
        #expect(segments("healthz") == ["healthz"])
        #expect(segments("/h\u{e9}t\u{e9}/\u{1F600}") == ["h\u{e9}t\u{e9}", "\u{1F600}"])
    }

    @Test func morePathThanCapacityIsCountedAsTooLong() {
        let path = "/a/b/c/d/e/f"
        #expect(parsed(path).count == PathSegments.capacity + 1)
        #expect(parsed(path).text(3, of: path) == "d")
    }

    @Test func onlyAPathWithOneSlashBeforeEachSegmentIsCanonical() {
        for path in ["/", "/resolve", "/v1/default/resolve", "/a/b/c/d/e/f"] { #expect(parsed(path).isCanonical, "\(path)") }
        for path in ["", "resolve", "//", "/resolve/", "//resolve", "/v1//default/resolve", "/v1/default/resolve/"] {
            #expect(!parsed(path).isCanonical, "\(path)")
        }
    }
}

/// With an operations listener, `/metrics` and the admin API are served there only, the tenant
/// API on the main listener only, and the probes on both.
@Suite struct ListenerSplitTests {
    private func exchange(
        _ path: String, on listener: Listener, separate: Bool, authorization: String? = "Bearer secret-token"
    ) -> Exchange {
        let fixture = ServiceFixture(adminToken: "secret-token", limits: HTTPDNSService.Limits(separateOpsListener: separate))
        fixture.service.isReady = true
        var request = HTTPRequest(method: "GET", path: path, authorization: authorization)
        request.listener = listener
        return Exchange(fixture.handle(request), releasing: fixture.upstreams + [fixture.fallback])
    }

    @Test(arguments: ["/metrics", "/v1/accounts", "/v1/accounts/default"])
    func opsRoutesAre404OnTheMainListenerWhenSeparate(path: String) {
        #expect(exchange(path, on: .main, separate: true).status == 404)
        #expect(exchange(path, on: .ops, separate: true).status == 200)
        #expect(exchange(path, on: .main, separate: false).status == 200)
    }

    /// The operations listener serves the tenant API to the admin only (the console uses it).
    @Test(arguments: ["/v1/default/cache", "/v1/default/stats"])
    func tenantRoutesOnTheOpsListenerAreTheAdminsOnly(path: String) {
        #expect(exchange(path, on: .ops, separate: true).status == 200)
        #expect(exchange(path, on: .ops, separate: true, authorization: nil).status == 401)
        #expect(exchange(path, on: .ops, separate: true, authorization: "Bearer wrong").status == 401)
        #expect(exchange(path, on: .main, separate: true, authorization: nil).status == 200)
    }

    @Test(arguments: ["/healthz", "/readyz"])
    func probesAnswerOnBothListeners(path: String) {
        #expect(exchange(path, on: .main, separate: true).status == 200)
        #expect(exchange(path, on: .ops, separate: true).status == 200)
    }
}

/// `RouteMatcher.match` gives the rows of the one pattern that fits: of those that fit, the one
/// with the most literal segments, first in the table on a tie; its rows in table order.
@Suite struct RouteTablePrecedenceTests {
    /// The rule written out over the whole table.
    static func definition(_ table: RouteTable, _ path: String) -> [String] {
        func literals(_ route: Route) -> Int { route.pattern.count { if case .literal = $0 { true } else { false } } }
        let segments = path.split(separator: "/").map(String.init)
        let fitting = table.routes.filter { route in
            route.pattern.count == segments.count
                && zip(route.pattern, segments).allSatisfy { if case .literal(let text) = $0 { text == $1 } else { true } }
        }
        guard let winner = fitting.max(by: { literals($0) < literals($1) }).map(literals) else { return [] }
        let pattern = fitting.first { literals($0) == winner }!.pattern
        return fitting.filter { $0.pattern == pattern }.map(Self.name)
    }

    static func name(_ route: Route) -> String { "\(route.method) \(route.path) \(route.format)" }

    @Test(arguments: [
        "/v1/accounts", "/v1/accounts/x", "/v1/accounts/accounts", "/v1/default/resolve", "/v1/accounts/resolve",
        "/v1/default/cache", "/v1/default/preload", "/v1/default/stats", "/default/d", "/resolve", "/dns-query",
        "/v1/default/dns-query", "/healthz", "/readyz", "/metrics", "/v1/x/y/z", "/", "/v1", "/v1/default/cache/refresh",
        "/v1/default/cache/refreshx", "/default/sign_d", "/default/ss", "/a/b/c/d/e",
    ])
    func theMostLiteralPatternWinsAndKeepsItsRowsInTableOrder(_ path: String) {
        let table = RouteTable.standard
        var bytes = path
        let rows = bytes.withUTF8 { table.matcher.match(UnsafeRawBufferPointer($0)).map { Array($0.rows) } } ?? []
        #expect(rows.map(Self.name) == Self.definition(table, path))
    }
}
