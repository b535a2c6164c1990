import HTTPDNSCore
import HTTPDNSTestSupport
import HTTPDNSWire
import Testing

@testable import HTTPDNSServer

/// RFC 8484 in process: which questions the engine answers, how, and what is refused. Queries
/// are made and replies read with libknot (`HTTPDNSWire`); the integration tests read them with
/// dnspython and curl.
@Suite struct DNSMessageHandlerTests {
    private func fixture(ispEnable: Bool = false) -> ServiceFixture {
        let fixture = ServiceFixture(config: .test { $0.ispEnable = ispEnable })
        fixture.seed([
            ("www.example.test", .a, fixture.entry(["192.0.2.10", "192.0.2.11"], ttl: 287)),
            ("nx.example.test", .a, fixture.entry([], ttl: 30, nxdomain: true)),
            ("gone.example.test", .a, fixture.entry([], ttl: 30, nxdomain: true, soa: ServiceFixture.zoneSOA)),
            ("v4only.example.test", .aaaa, fixture.entry([], ttl: 30, soa: ServiceFixture.zoneSOA)),
        ])
        return fixture
    }

    private func ask(
        _ fixture: ServiceFixture, _ name: String, type: UInt16 = 1, id: UInt16 = 0x4242, subnet: DNSQueryMessage.ClientSubnet? = nil,
        path: String = "/dns-query"
    ) throws -> Exchange {
        let query = try DNSQueryWriter.query(name: name, type: type, id: id, clientSubnet: subnet)
        return fixture.send("POST", path, body: query, peer: "198.51.100.7", contentType: "application/dns-message")
    }

    @Test func aCachedAnswerIsWrittenAtOnceWithTheQueryIDAndTheTTLAsMaxAge() throws {
        let fixture = fixture()
        let exchange = try ask(fixture, "www.example.test")
        #expect(!exchange.deferred)
        #expect(exchange.status == 200)
        #expect(exchange.response?.contentType == "application/dns-message")
        #expect(exchange.header("Cache-Control") == "max-age=287")
        let reply = try DNSReplySummary.parse(exchange.response?.body ?? [])
        #expect(reply.id == 0x4242)
        #expect(reply.rcode == 0)
        #expect(reply.answerCount == 2)
        #expect(reply.minimumTTL == 287)
        #expect(fixture.upstream.totalCalls == 0)
    }

    @Test func aCachedNXDOMAINIsRcode3WithTheNegativeTTLAsMaxAge() throws {
        let exchange = try ask(fixture(), "nx.example.test", id: 9)
        let reply = try DNSReplySummary.parse(exchange.response?.body ?? [])
        #expect(reply.rcode == 3)
        #expect(reply.answerCount == 0)
        #expect(exchange.header("Cache-Control") == "max-age=30")
    }

    /// RFC 2308 §3: a negative answer whose zone SOA the upstream gave carries it in the
    /// authority section, with the answer's remaining TTL (§5), for NXDOMAIN and NODATA alike.
    @Test func aCachedNegativeAnswerCarriesTheZoneSOAWithTheRemainingTTL() throws {
        let fixture = fixture()
        fixture.clock.advance(by: 12)
        let expected = DNSSOARecord(
            zone: "example.test.", primary: "ns.example.test.", mailbox: "hostmaster.example.test.", serial: 2026120301, refresh: 3600,
            retry: 900, expire: 604_800, minimum: 45)
        for (name, type, rcode) in [("gone.example.test", UInt16(1), UInt16(3)), ("v4only.example.test", 28, 0)] {
            let exchange = try ask(fixture, name, type: type)
            let reply = try DNSReplySummary.parse(exchange.response?.body ?? [])
            #expect(reply.rcode == rcode)
            #expect(reply.answerCount == 0)
            #expect(reply.soa == expected)
            #expect(reply.negativeTTL == 18)
            #expect(exchange.header("Cache-Control") == "max-age=18")
        }
        // An entry without one (as the local DNS fallback stores it) is written without.
        #expect(try DNSReplySummary.parse(try ask(fixture, "nx.example.test").response?.body ?? []).soa == nil)
    }

    @Test func aMissIsResolvedByTheEngineOnceAndThenCached() throws {
        let fixture = fixture()
        fixture.upstream.setAnswer("new.example.test", .aaaa, addresses: ["2001:db8::7"], ttl: 90)
        let first = try ask(fixture, "New.Example.Test", type: 28, id: 1)
        #expect(try DNSReplySummary.parse(first.response?.body ?? []).answerCount == 1)
        #expect(first.header("Cache-Control") == "max-age=90")
        let second = try ask(fixture, "new.example.test", type: 28, id: 2)
        #expect(!second.deferred)
        #expect(try DNSReplySummary.parse(second.response?.body ?? []).id == 2)
        #expect(fixture.upstream.calls("new.example.test", .aaaa) == 1)
    }

    @Test func concurrentMissesShareOneUpstreamQueryWithEveryOtherPath() throws {
        let fixture = fixture()
        fixture.upstream.setAnswer("shared.example.test", .a, addresses: ["192.0.2.77"], ttl: 60)
        fixture.upstream.holdReplies(true)
        var boxes: [ResponseBox] = []
        for id in UInt16(1)...3 {
            var request = HTTPRequest(
                method: "POST", path: "/dns-query", body: try DNSQueryWriter.query(name: "shared.example.test", type: 1, id: id))
            request.contentType = "application/dns-message"
            guard case .deferred(let start) = fixture.handle(request) else { Issue.record("a miss was answered at once"); return }
            let box = ResponseBox()
            start { box.append($0) }
            boxes.append(box)
        }
        // API v1 asks the same name meanwhile: it joins the same flight.
        guard
            case .deferred(let start) = fixture.handle(
                HTTPRequest(method: "GET", path: "/v1/default/resolve", query: ["host": "shared.example.test", "type": "A"]))
        else {
            Issue.record("a miss was answered at once")
            return
        }
        let v1 = ResponseBox()
        start { v1.append($0) }
        #expect(fixture.upstream.releaseAll() == 1)
        #expect(fixture.upstream.calls("shared.example.test", .a) == 1)
        for (index, box) in boxes.enumerated() {
            let reply = try DNSReplySummary.parse(box.first?.body ?? [])
            #expect(reply.id == UInt16(index + 1))
            #expect(reply.answerCount == 1)
        }
        #expect(v1.first?.bodyText.contains("192.0.2.77") == true)
    }

    @Test func theClientSubnetChoosesTheNetworkOfAnISPEnabledAccountAndIsEchoedWithItsScope() throws {
        let fixture = fixture(ispEnable: true)
        fixture.upstream.setAnswer("other.example.test", .a, addresses: ["192.0.2.50"], ttl: 60)
        let subnet = DNSQueryMessage.ClientSubnet(family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, address: [203, 0, 113, 0])
        let exchange = try ask(fixture, "other.example.test", subnet: subnet)
        #expect(try #require(fixture.upstream.queries.last).clientSubnet == "203.0.113.0/24")
        // The OPT record ends the message: family 1, source 24, scope 24, 203.0.113.
        #expect(exchange.response?.body.suffix(7) == [0, 1, 24, 24, 203, 0, 113])
        // Without the option, the peer's network.
        _ = try ask(fixture, "third.example.test")
        #expect(try #require(fixture.upstream.queries.last).clientSubnet == "198.51.100.0/24")
    }

    @Test func otherTypesAreForwardedAndWithoutAForwardingUpstreamAreServfail() throws {
        let fixture = fixture()
        let exchange = try ask(fixture, "www.example.test", type: 16)
        #expect(exchange.deferred)
        #expect(exchange.status == 200)
        #expect(exchange.header("Cache-Control") == "max-age=0")
        #expect(try DNSReplySummary.parse(exchange.response?.body ?? []).rcode == 2)
        #expect(fixture.upstream.totalCalls == 0)
        #expect(fixture.service.handlers.rfc8484.metrics.forwardFailures.value == 1)
    }

    @Test func malformedMessagesAre400AndCountedAndChangeNothing() throws {
        let fixture = fixture()
        let garbage: [UInt8] = [0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xC0]
        let exchange = fixture.send("POST", "/dns-query", body: garbage, contentType: "application/dns-message")
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidDNSMessage")
        #expect(fixture.service.handlers.rfc8484.metrics.malformed.value == 1)
        let untyped = fixture.send("POST", "/dns-query", body: try DNSQueryWriter.query(name: "www.example.test", type: 1))
        #expect(untyped.status == 415)
        #expect(fixture.service.handlers.rfc8484.metrics.malformed.value == 1)
        #expect(fixture.get("/dns-query").errorCode == "MissingArgument")
        #expect(fixture.upstream.totalCalls == 0)
    }

    @Test func theRoutesAllowGETAndPOST() {
        let fixture = fixture()
        let put = fixture.send("PUT", "/dns-query")
        #expect(put.status == 405)
        #expect(put.header("Allow") == "GET, POST")
        // In API v1's error form (RFC 8484's), not the DoH JSON API's.
        #expect(put.errorCode == "MethodNotAllowed")
        #expect(fixture.send("DELETE", "/v1/default/dns-query").header("Allow") == "GET, POST")
    }
}
