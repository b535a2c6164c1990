import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// `HTTPDNSService.fastResponse`: the resolve fast path answers a cache hit exactly as the full
/// path does, counts it once, and leaves everything else to the full path.
@Suite struct FastPathTests {
    static let path = "/v1/default/resolve"

    /// A fixture whose cache holds one name of each shape.
    private func seededFixture(_ change: (inout AccountConfig) -> Void = { _ in }) -> ServiceFixture {
        let fixture = ServiceFixture(config: .test(change))
        fixture.seed([
            ("two.example.test", .a, fixture.entry(["127.0.0.11", "127.0.0.12"], ttl: 300)),
            ("three.example.test", .a, fixture.entry(["0.0.0.0", "9.10.99.100", "255.255.255.255"], ttl: 4_000_000_000)),
            ("four.example.test", .a, fixture.entry(["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"], ttl: 60)),
            ("two.example.test", .aaaa, fixture.entry(["::1", "2001:db8::1"], ttl: 120)),
            ("gone.example.test", .a, fixture.entry([], ttl: 30, nxdomain: true)),
            ("_sip._tcp.example.test", .a, fixture.entry(["127.0.0.9"], ttl: 5)),
        ])
        fixture.clock.advance(by: 2)
        return fixture
    }

    /// The body the fast path answers, nil when it leaves the request to the full path.
    private func fastBody(_ fixture: ServiceFixture, _ head: MemoryHead) -> [UInt8]? {
        fixture.service.fastResponse(head)?.body
    }

    /// The route's handler's own response to the same request, without the pipeline's hit step
    /// (which runs the fast path's reader): the writer of answers from the upstreams.
    private func fullResponse(_ fixture: ServiceFixture, _ head: MemoryHead) -> ServerResponse? {
        fixture.handlerResponse(head.request())
    }

    @Test(
        arguments: [
            [("host", "two.example.test")],
            [("host", "two.example.test"), ("type", "A")],
            [("host", "two.example.test"), ("type", "aaaa")],
            [("host", "two.example.test"), ("type", "6"), ("short", "1")],
            [("host", "two.example.test"), ("short", "true")],
            [("host", "two.example.test"), ("short", "0"), ("client_ip", "192.0.2.1")],
            [("host", "two.example.test"), ("type", "")],
            [("host", "TWO.Example.test.")],
            [("host", "three.example.test")],
            [("host", "four.example.test"), ("short", "1")],
            [("host", "gone.example.test")],
            [("host", "_sip._tcp.example.test")],
            [("host", "two.example.test"), ("host", "nothing.example.test")],
            [("host", "two.example.test"), ("type", "A"), ("type", "both")],
        ] as [[(String, String?)]])
    func aCachedAnswerIsTheResponseTheFullPathGives(arguments: [(String, String?)]) throws {
        let fixture = seededFixture()
        let head = MemoryHead("GET", Self.path, arguments)
        let fast = try #require(fastBody(fixture, head), "the fast path did not answer a cache hit")
        let full = try #require(fullResponse(fixture, head))
        #expect(full == ServerResponse(status: 200, body: fast))
    }

    @Test func anExpiredEntryServedStaleIsTheSameResponse() throws {
        let fixture = seededFixture { $0.reuseExpiredIPEnabled = true }
        fixture.upstream.holdReplies(true)  // the background refreshes stay pending
        fixture.clock.advance(by: 10)
        let head = MemoryHead("GET", Self.path, [("host", "_sip._tcp.example.test")])
        let fast = try #require(fastBody(fixture, head))
        #expect(fullResponse(fixture, head) == ServerResponse(status: 200, body: fast))
        #expect(String(decoding: fast, as: UTF8.self).contains(#""stale":true"#))
    }

    @Test(
        arguments: [
            ("POST", path, [("host", "two.example.test")]),
            ("GET", "/v1/default/resolve/", [("host", "two.example.test")]),
            ("GET", "/v1//default/resolve", [("host", "two.example.test")]),
            ("GET", "/v1/default/cache", [("host", "two.example.test")]),
            ("GET", "/v1/x/default/resolve", [("host", "two.example.test")]),
            ("GET", "/v1/nobody/resolve", [("host", "two.example.test")]),
            ("GET", "/v1/resolve", [("host", "two.example.test")]),
            ("GET", path, [("host", "miss.example.test")]),
            ("GET", path, [("host", "two.example.test,three.example.test")]),
            ("GET", path, [("host", "two..example.test")]),
            ("GET", path, [("host", "")]),
            ("GET", path, [("host", nil)]),
            ("GET", path, [("HOST", "two.example.test")]),
            ("GET", path, []),
            ("GET", path, [("host", "two.example.test"), ("type", "both")]),
            ("GET", path, [("host", "two.example.test"), ("type", "MX")]),
            ("GET", path, [("host", "two.example.test"), ("short", "yes")]),
            ("GET", path, [("host", "two.example.test"), ("client_ip", "not-an-address")]),
            // An argument resolve does not read: refused by the full path, never ignored here.
            ("GET", path, [("other", "x"), ("host", "two.example.test")]),
            ("GET", path, [("host", "two.example.test"), ("hots", "x")]),
        ] as [(String, String, [(String, String?)])])
    func everythingElseIsLeftToTheFullPath(method: String, path: String, arguments: [(String, String?)]) {
        let fixture = seededFixture()
        let hits = fixture.engine.metrics.cacheHits.value
        #expect(fastBody(fixture, MemoryHead(method, path, arguments)) == nil)
        #expect(fixture.engine.metrics.cacheHits.value == hits, "a declined request must count nothing")
    }

    @Test func twoFamiliesAreLeftToTheFullPath() {
        // With IPv6 on, a query without `type` asks for both families.
        let fixture = seededFixture { $0.ipv6Enable = true }
        #expect(fastBody(fixture, MemoryHead("GET", Self.path, [("host", "two.example.test")])) == nil)
        #expect(fastBody(fixture, MemoryHead("GET", Self.path, [("host", "two.example.test"), ("type", "A")])) != nil)
    }

    @Test func aFastHitIsCountedOnceInTheMetricsAndTheStatistics() throws {
        let fixture = seededFixture()
        let head = MemoryHead("GET", Self.path, [("host", "two.example.test")])
        for _ in 0..<3 { #expect(fastBody(fixture, head) != nil) }
        #expect(fixture.engine.metrics.cacheHits.value == 3)
        let records = try #require(fixture.get("/v1/default/stats").json as? [[String: Any]])
        let record = try #require(records.first { $0["domain"] as? String == "two.example.test" })
        #expect(number(record["cacheDnsNum"]) == 3)
    }
}

/// The fast path behind the real `HTTPServer`: it is tried first, reads libmicrohttpd's decoded
/// query the way the full path does, and what it leaves gets the full path's answer.
@Suite(.serialized) struct FastPathOverSocketTests {
    @Test func theServerAnswersAHitOnTheFastPathAndLeavesTheRestToTheHandler() throws {
        let fixture = ServiceFixture()
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.11", "127.0.0.12"]))])
        let answered = StripedCounter()
        let server = HTTPServer(
            options: HTTPServerOptions(host: "127.0.0.1", port: 0, threads: 2),
            fastHandler: { [service = fixture.service] head in
                guard let response = service.fastResponse(head) else { return nil }
                answered.add(1)
                return .answer(response)
            },
            handler: { [service = fixture.service] in service.handle($0) })
        let port = try server.start()
        defer { server.stop(grace: 0) }
        let connection = try RawHTTPConnection(port: port)
        let expected =
            #"{"host":"www.example.test","ips":["127.0.0.11","127.0.0.12"],"ipsv6":[],"ttl":300,"origin_ttl":300,"source":"cache","stale":false}"#

        // Hits, whatever the query's encoding: each answered on the fast path.
        // The four arguments are read in one pass: the first value of each counts.
        let queries = [
            "host=www.example.test", "host=www%2Eexample%2etest", "type=A&host=WWW.example.test.",
            "host=www.example.test&host=other.example.test",
            "type=A&host=www.example.test&type=bad&short=0&short=yes", "client_ip=192.0.2.1&host=www.example.test&client_ip=x",
        ]
        for query in queries {
            let response = try connection.request("GET", "/v1/default/resolve?" + query)
            #expect(response.status == 200, "\(query)")
            #expect(response.text == expected, "\(query)")
            #expect(response.header("Content-Type") == ServerResponse.jsonType)
        }
        let short = try connection.request("GET", "/v1/default/resolve?short=1&host=www.example.test&short=0")
        #expect(short.text == #"["127.0.0.11","127.0.0.12"]"#)
        #expect(answered.value == queries.count + 1)

        // Left to the handler, which gives these answers.
        let left: [(String, String, Int)] = [
            ("GET", "/v1/default/resolve?HOST=www.example.test", 400),
            // An argument resolve does not read is refused, not ignored.
            ("GET", "/v1/default/resolve?flag&host=www.example.test", 400),
            ("GET", "/v1/default/resolve?host", 400),
            ("GET", "/v1/default/resolve?host=www.example.test&type=bad", 400),
            ("GET", "/v1/default/resolve?short=yes&host=www.example.test&short=1", 400),
            ("GET", "/v1/default/resolve?host=www.example.test&client_ip=x&client_ip=192.0.2.1", 400),
            ("GET", "/v1/default/resolve?host=www..example.test", 400),
            ("DELETE", "/v1/default/resolve?host=www.example.test", 405),
            ("GET", "/v1/nobody/resolve?host=www.example.test", 404),
            ("GET", "/v1/default/resolve/?host=www.example.test", 200),
        ]
        for (method, path, status) in left {
            #expect(try connection.request(method, path).status == status, "\(method) \(path)")
        }
        #expect(answered.value == queries.count + 1)
        #expect(fixture.engine.metrics.cacheHits.value == UInt64(queries.count + 2))
    }
}
