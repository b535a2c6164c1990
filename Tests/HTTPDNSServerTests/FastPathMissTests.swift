import Dispatch
import HTTPDNSCore
import HTTPDNSCrypto
import HTTPDNSTestSupport
import HTTPDNSWire
import Testing

@testable import HTTPDNSServer

/// `HTTPDNSService.fastPath` on a miss of a request its readers take (one name, one family): the
/// lookup starts there, and its response is the general path's, written by the format's general
/// writer, labelled and timed as `handle` does. What the fast path may not answer it still leaves.
@Suite struct FastPathMissTests {
    private func fixture(
        limits: HTTPDNSService.Limits = HTTPDNSService.Limits(), _ change: (inout AccountConfig) -> Void = { _ in }
    ) -> ServiceFixture {
        let fixture = ServiceFixture(config: .test(change), limits: limits)
        fixture.upstream.setAnswer("new.example.test", addresses: ["192.0.2.20", "192.0.2.21"], ttl: 60)
        fixture.upstream.setAnswer("new.example.test", .aaaa, addresses: ["2001:db8::20"], ttl: 90)
        fixture.upstream.setFailure("broken.example.test", .a, .serverFailure)
        return fixture
    }

    private static func dns(_ name: String, type: UInt16 = 1) throws -> String {
        Base64URL.encode(try DNSQueryWriter.query(name: name, type: type, id: 0x4321, clientSubnet: nil))
    }

    /// The fast path's lookup of `head`, answered; nil when it left the request to the general path.
    private func fastLookup(_ fixture: ServiceFixture, _ head: MemoryHead) -> Exchange? {
        switch fixture.service.fastPath(head) {
        case .lookup(let result)?: Exchange(result, releasing: fixture.upstreams + [fixture.fallback]).awaited()
        default: nil
        }
    }

    private func general(_ fixture: ServiceFixture, _ head: MemoryHead) -> Exchange {
        Exchange(fixture.service.handle(head.request()), releasing: fixture.upstreams + [fixture.fallback]).awaited()
    }

    @Test(
        arguments: [
            ("/v1/default/resolve", [("host", "new.example.test")]),
            ("/v1/default/resolve", [("host", "New.Example.test."), ("type", "AAAA"), ("short", "1")]),
            ("/v1/default/resolve", [("host", "broken.example.test")]),
            ("/v1/default/resolve", [("host", "nothing.example.test")]),
            ("/default/d", [("host", "new.example.test"), ("ip", "192.0.2.9")]),
            ("/default/d", [("host", "broken.example.test")]),
            ("/resolve", [("name", "new.example.test"), ("type", "AAAA")]),
            ("/resolve", [("name", "nothing.example.test")]),
            ("/dns-query", [("dns", try! dns("new.example.test"))]),
            ("/v1/default/dns-query", [("dns", try! dns("NEW.example.test", type: 28))]),
            ("/dns-query", [("dns", try! dns("broken.example.test"))]),
        ] as [(String, [(String, String?)])])
    func aMissIsLookedUpOnTheFastPathAndAnsweredAsTheGeneralPathAnswersIt(path: String, arguments: [(String, String?)]) throws {
        let fast = fixture(), full = fixture()
        // Held until `Exchange` releases them: the answers come after the connection was suspended.
        for fixture in [fast, full] { fixture.upstream.holdReplies(true) }
        let head = MemoryHead("GET", path, arguments, peer: "192.0.2.50")
        let lookup = try #require(fastLookup(fast, head), "the fast path left a miss to the general path")
        let answer = try #require(lookup.response, "no answer came")
        let expected = try #require(general(full, head).response)
        #expect(answer.status == expected.status)
        #expect(answer.body == expected.body, "\(String(decoding: answer.body, as: UTF8.self))")
        #expect(answer.contentType == expected.contentType)
        #expect(answer.headers.map { "\($0.0): \($0.1)" } == expected.headers.map { "\($0.0): \($0.1)" })
        #expect(answer.source == expected.source)
        #expect(answer.endpoint == expected.endpoint && answer.logAccount == "default")
        #expect(lookup.deferred && lookup.box?.count == 1)
        #expect(fast.upstream.totalCalls == full.upstream.totalCalls)
    }

    @Test func aMissThatJoinsALookupInFlightIsAnsweredByIt() throws {
        let fixture = fixture()
        fixture.upstream.holdReplies(true)
        let head = MemoryHead("GET", "/v1/default/resolve", [("host", "new.example.test")], peer: "192.0.2.50")
        var results: [HandlerResult] = []
        for _ in 0..<2 {
            guard case .lookup(let result)? = fixture.service.fastPath(head) else { Issue.record("left to the general path"); return }
            results.append(result)
        }
        let exchanges = results.map { Exchange($0) }
        #expect(fixture.upstream.totalCalls == 1)
        #expect(fixture.upstream.releaseAll() == 1)
        for exchange in exchanges { #expect(exchange.awaited().status == 200) }
    }

    @Test func aMissTakesOneTokenOfItsClientsRate() {
        let fixture = fixture(limits: HTTPDNSService.Limits(clientRate: .init(perSecond: 1, burst: 2)))
        let peer = "192.0.2.50"
        for name in ["new.example.test", "nothing.example.test"] {
            #expect(fastLookup(fixture, MemoryHead("GET", "/v1/default/resolve", [("host", name)], peer: peer)) != nil)
        }
        // Out of tokens: left to the general path, which refuses it.
        let third = MemoryHead("GET", "/v1/default/resolve", [("host", "third.example.test")], peer: peer)
        #expect(fastLookup(fixture, third) == nil)
        #expect(general(fixture, third).status == 429)
        #expect(fixture.upstream.calls("third.example.test") == 0)
    }

    @Test func aMissIsLeftToTheGeneralPathWhereTheFastPathLeavesAHit() {
        // Both families, an invalid name, a batch: the general path's.
        let open = fixture()
        for arguments in [
            [("host", "new.example.test"), ("type", "both")], [("host", "new..example.test")], [("host", "a.example.test,b.example.test")],
        ] as [[(String, String?)]] {
            #expect(fastLookup(open, MemoryHead("GET", "/v1/default/resolve", arguments)) == nil)
        }
        // `fastResponse` answers hits only: a miss starts nothing.
        #expect(open.service.fastResponse(MemoryHead("GET", "/v1/default/resolve", [("host", "new.example.test")]))?.count == nil)
        #expect(open.upstream.totalCalls == 0)
    }

    @Test func aMissIsRecordedOnceUnderItsRouteAndSource() {
        let fixture = fixture()
        #expect(fastLookup(fixture, MemoryHead("GET", "/v1/default/resolve", [("host", "new.example.test")]))?.status == 200)
        let text = MetricsText(fixture.get("/metrics", listener: .ops).text)
        let count = text.value(
            "httpdns_request_duration_seconds_count",
            ["account": "default", "protocol": "v1", "endpoint": "/v1/{account}/resolve", "source": "upstream"])
        #expect(count == 1)
        #expect(fixture.engine.metrics.cacheMisses.value == 1)
    }
}

/// The fast path's miss behind the real `HTTPServer`: the connection is suspended while the
/// upstream answers on another thread, resumed with the answer, and the request is counted as
/// answered by the fast path.
@Suite(.serialized) struct FastPathMissOverSocketTests {
    @Test func aMissIsAnsweredOnTheFastPathThroughASuspendedConnection() throws {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("new.example.test", addresses: ["192.0.2.20"], ttl: 60)
        fixture.upstream.deliverAsynchronously(on: DispatchQueue(label: "upstream"))
        let server = HTTPServer(
            options: HTTPServerOptions(host: "127.0.0.1", port: 0, threads: 2), fastHandler: fixture.service.fastPath,
            handler: fixture.service.handle)
        let port = try server.start()
        defer { server.stop(grace: 0) }
        let connection = try RawHTTPConnection(port: port)
        let miss = try connection.request("GET", "/v1/default/resolve?host=new.example.test")
        #expect(miss.status == 200)
        #expect(miss.text.contains(#""ips":["192.0.2.20"]"#) && miss.text.contains(#""source":"upstream""#), "\(miss.text)")
        let hit = try connection.request("GET", "/v1/default/resolve?host=new.example.test")
        #expect(hit.text.contains(#""source":"cache""#), "\(hit.text)")
        #expect(server.fastPathAnswers == 2)
        #expect(fixture.upstream.totalCalls == 1)
    }
}
