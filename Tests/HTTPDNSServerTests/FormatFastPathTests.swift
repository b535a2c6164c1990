import HTTPDNSCore
import HTTPDNSCrypto
import HTTPDNSWire
import Testing

@testable import HTTPDNSServer

/// The fast path of the other wire formats (EMAS `/d`, DoH JSON, RFC 8484 GET): each format's
/// cache hit is its general writer's response, byte for byte, with its content type and headers;
/// refusals and unusual requests are left to the general path.
@Suite struct FormatFastPathTests {
    private func seededFixture(_ change: (inout AccountConfig) -> Void = { _ in }) -> ServiceFixture {
        let fixture = ServiceFixture(config: .test(change))
        fixture.seed([
            ("two.example.test", .a, fixture.entry(["127.0.0.11", "127.0.0.12"], ttl: 300)),
            ("two.example.test", .aaaa, fixture.entry(["::1", "2001:db8::1"], ttl: 120)),
            ("nx.example.test", .a, fixture.entry([], ttl: 30, nxdomain: true, soa: ServiceFixture.zoneSOA)),
            ("empty.example.test", .a, fixture.entry([], ttl: 40, soa: ServiceFixture.zoneSOA)),
            ("nosoa.example.test", .a, fixture.entry([], ttl: 40, nxdomain: true)),
        ])
        return fixture
    }

    private static func dns(_ name: String, type: UInt16 = 1, id: UInt16 = 0x1234) throws -> String {
        Base64URL.encode(try DNSQueryWriter.query(name: name, type: type, id: id, clientSubnet: nil))
    }

    /// What the fast path answered (body, content type, headers), nil when it left the request.
    private func fast(_ fixture: ServiceFixture, _ head: MemoryHead) -> (body: [UInt8], contentType: String, headers: [(String, String)])? {
        guard let response = fixture.service.fastResponse(head) else { return nil }
        return (response.body, response.contentType ?? HTTPResponse.jsonType, response.headers)
    }

    /// The fast path's answer and the general path's to the same request: equal in status, body,
    /// content type and headers.
    private func expectSameAnswer(_ fixture: ServiceFixture, _ head: MemoryHead) throws {
        let (fastBody, contentType, headers) = try #require(fast(fixture, head), "the fast path did not answer a cache hit")
        // The route's handler alone (not the pipeline's hit step, which runs the same reader as
        // the fast path): the writer of answers that come from the upstreams.
        let full = try #require(fixture.handlerResponse(head.request()), "the handler deferred a cache hit")
        #expect(full.status == 200)
        #expect(full.body == fastBody, "\(String(decoding: full.body, as: UTF8.self)) vs \(String(decoding: fastBody, as: UTF8.self))")
        #expect(full.contentType == contentType)
        #expect(full.headers.map { "\($0.0): \($0.1)" } == headers.map { "\($0.0): \($0.1)" })
    }

    @Test(
        arguments: [
            ("/default/d", [("host", "two.example.test")]),
            ("/default/d", [("host", "two.example.test"), ("query", "6")]),
            ("/default/d", [("host", "TWO.example.test"), ("ip", "192.0.2.9"), ("platform", "android")]),
            ("/default/d", [("sdk", "x"), ("host", "nx.example.test"), ("query", "4")]),
            ("/resolve", [("name", "two.example.test")]),
            ("/resolve", [("name", "two.example.test"), ("type", "AAAA"), ("uid", "default")]),
            ("/resolve", [("name", "two.example.test"), ("type", "1"), ("short", "1"), ("edns_client_subnet", "192.0.2.0/24")]),
            ("/resolve", [("name", "nx.example.test"), ("random", "x")]),
            ("/resolve", [("name", "empty.example.test")]),
            ("/resolve", [("name", "nosoa.example.test")]),
        ] as [(String, [(String, String?)])])
    func aJSONFormatHitIsTheGeneralPathsAnswer(path: String, arguments: [(String, String?)]) throws {
        try expectSameAnswer(seededFixture(), MemoryHead("GET", path, arguments, peer: "198.51.100.7"))
    }

    @Test func dnsJSONAtDNSQueryIsAnsweredFastByTheDoHJSONWriter() throws {
        let fixture = seededFixture()
        let head = MemoryHead("GET", "/dns-query", [("name", "two.example.test")], accept: "application/dns-json")
        try expectSameAnswer(fixture, head)
        let body = String(decoding: fast(fixture, head)?.body ?? [], as: UTF8.self)
        #expect(body.hasPrefix(#"{"Status":0"#))
    }

    @Test(arguments: [
        ("/dns-query", "two.example.test", UInt16(1)),
        ("/dns-query", "Two.Example.Test", UInt16(28)),
        ("/v1/default/dns-query", "two.example.test", UInt16(1)),
        ("/v1/default/dns-query", "nx.example.test", UInt16(1)),
        ("/dns-query", "empty.example.test", UInt16(1)),
        ("/dns-query", "nosoa.example.test", UInt16(1)),
    ])
    func anRFC8484HitIsTheGeneralPathsMessageWithItsMaxAge(path: String, name: String, type: UInt16) throws {
        let fixture = seededFixture()
        try expectSameAnswer(fixture, MemoryHead("GET", path, [("dns", try Self.dns(name, type: type))]))
        let answer = try #require(fast(fixture, MemoryHead("GET", path, [("dns", try Self.dns(name, type: type))])))
        #expect(answer.contentType == "application/dns-message")
        #expect(answer.headers.contains { $0.0 == "Cache-Control" })
    }

    @Test func anRFC8484HitWithEDNSAndPaddedBase64IsTheGeneralPathsMessage() throws {
        let fixture = seededFixture()
        let subnet = DNSQueryMessage.ClientSubnet(family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, address: [198, 51, 100, 0])
        let query = try DNSQueryWriter.query(name: "two.example.test", type: 1, id: 77, clientSubnet: subnet)
        var text = Base64URL.encode(query)
        while text.count % 4 != 0 { text += "=" }
        try expectSameAnswer(fixture, MemoryHead("GET", "/dns-query", [("dns", text)]))
    }

    /// The fast path's memory (its decode buffer, libknot's per-thread block) serves one hit after
    /// another: each is still exactly the general path's message, a short one after long ones too.
    @Test func consecutiveRFC8484HitsCarryNothingOfEachOther() throws {
        let fixture = seededFixture()
        for (name, type) in [
            ("two.example.test", UInt16(28)), ("nx.example.test", 1), ("two.example.test", 1), ("empty.example.test", 1),
            ("two.example.test", 28),
        ] {
            try expectSameAnswer(
                fixture, MemoryHead("GET", "/dns-query", [("dns", try Self.dns(name, type: type, id: UInt16(name.count)))]))
        }
    }

    /// `query` with an EDNS padding option (RFC 7830) of `padding` bytes.
    private static func padded(_ query: [UInt8], _ padding: Int) -> [UInt8] {
        var bytes = query
        bytes[11] = 1  // ARCOUNT
        let length = 4 + padding
        bytes += [
            0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, UInt8(length >> 8), UInt8(length & 0xFF), 0, 12, UInt8(padding >> 8), UInt8(padding & 0xFF),
        ]
        return bytes + [UInt8](repeating: 0, count: padding)
    }

    @Test func aMessageLongerThanTheFastPathsBufferIsAnsweredByTheGeneralPath() throws {
        let fixture = seededFixture()
        let query = Self.padded(try DNSQueryWriter.query(name: "two.example.test", type: 1, id: 5), 1100)
        let head = MemoryHead("GET", "/dns-query", [("dns", Base64URL.encode(query))])
        #expect(fast(fixture, head) == nil)
        let exchange = fixture.send("GET", "/dns-query", query: ["dns": Base64URL.encode(query)])
        #expect(exchange.status == 200)
        #expect(try DNSReplySummary.parse(exchange.response?.body ?? []).answerCount == 2)
        // A padded query that fits is answered fast, as the general path answers it.
        try expectSameAnswer(
            fixture,
            MemoryHead(
                "GET", "/dns-query",
                [("dns", Base64URL.encode(Self.padded(try DNSQueryWriter.query(name: "two.example.test", type: 1), 100)))]))
    }

    @Test(arguments: [
        Base64URL.encode([UInt8](repeating: 0xC0, count: 1200)),  // longer than the fast path's buffer
        Base64URL.encode([0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xC0]),
        Base64URL.encode([UInt8](repeating: 0, count: 5)),
    ])
    func aMalformedDNSArgumentIsLeftToTheGeneralPathWhichCountsIt(_ text: String) {
        let fixture = seededFixture()
        #expect(fast(fixture, MemoryHead("GET", "/dns-query", [("dns", text)])) == nil)
        #expect(fixture.service.handlers.rfc8484.metrics.malformed.value == 0)
        let exchange = fixture.send("GET", "/dns-query", query: ["dns": text])
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidDNSMessage")
        #expect(fixture.service.handlers.rfc8484.metrics.malformed.value == 1)
    }

    @Test(
        arguments: [
            ("GET", "/default/d", [("host", "two.example.test"), ("query", "4,6")]),
            ("GET", "/default/d", [("host", "two.example.test"), ("query", "5")]),
            ("GET", "/default/d", [("host", "miss.example.test")]),
            ("GET", "/default/d", [("host", "")]),
            ("GET", "/default/d", [("host", "two.example.test"), ("enc", "x")]),
            ("GET", "/default/sign_d", [("host", "two.example.test"), ("t", "1"), ("s", "x")]),
            ("GET", "/default/resolve", [("host", "two.example.test")]),
            ("GET", "/nobody/d", [("host", "two.example.test")]),
            ("GET", "/resolve", [("name", "two.example.test"), ("type", "MX")]),
            ("GET", "/resolve", [("name", "two.example.test"), ("short", "yes")]),
            ("GET", "/resolve", [("name", "two.example.test"), ("edns_client_subnet", "nonsense")]),
            ("GET", "/resolve", [("name", "two.example.test"), ("uid", "nobody")]),
            ("GET", "/resolve", [("name", "two.example.test"), ("ak", "k"), ("ts", "1"), ("key", "x")]),
            ("GET", "/resolve/", [("name", "two.example.test")]),
            ("POST", "/resolve", [("name", "two.example.test")]),
            ("GET", "/dns-query", [("dns", "not base64!")]),
            ("GET", "/dns-query", [("dns", "AAAA")]),
            ("GET", "/dns-query", [("name", "two.example.test")]),
            ("GET", "/v1/nobody/dns-query", [("name", "two.example.test")]),
        ] as [(String, String, [(String, String?)])])
    func refusalsMissesAndTheUnusualAreLeftToTheGeneralPath(method: String, path: String, arguments: [(String, String?)]) {
        let fixture = seededFixture()
        let hits = fixture.engine.metrics.cacheHits.value
        #expect(fast(fixture, MemoryHead(method, path, arguments, peer: "198.51.100.7")) == nil)
        #expect(fixture.engine.metrics.cacheHits.value == hits, "a declined request must count nothing")
    }

    @Test func otherRFC8484QuestionsAreLeftToTheGeneralPath() throws {
        let fixture = seededFixture()
        #expect(fast(fixture, MemoryHead("GET", "/dns-query", [("dns", try Self.dns("two.example.test", type: 16))])) == nil)
    }

    @Test func anAccountThatRequiresSignaturesGetsNoUnsignedFastAnswer() {
        let fixture = seededFixture {
            $0.clientKeys = [ClientKey(id: "r1", secret: "0123456789abcdef0123456789abcdef", role: .resolve)]
            $0.requireSignedRequests = true
        }
        #expect(fast(fixture, MemoryHead("GET", "/default/d", [("host", "two.example.test")])) == nil)
        #expect(fast(fixture, MemoryHead("GET", "/resolve", [("name", "two.example.test")])) == nil)
        #expect(fixture.get("/default/d", ["host": "two.example.test"]).status == 403)
    }

    @Test func aValidSignDIsAnsweredFastAfterTheGeneralSignatureCheckAndABadOneIsNot() throws {
        let secret = "0123456789abcdef0123"
        let fixture = seededFixture {
            $0.clientKeys = [ClientKey(id: "k1", secret: secret, role: .resolve)]
            $0.requireSignedRequests = true
        }
        let expiry = "1700000600"  // the fixture's manual clock is at 1 700 000 000
        let signature = try EMASSignature.signature(hosts: "two.example.test", secret: secret, expiry: expiry)
        let signed = MemoryHead(
            "GET", "/default/sign_d", [("host", "two.example.test"), ("t", expiry), ("s", signature)], peer: "198.51.100.7")
        try expectSameAnswer(fixture, signed)
        for (t, s) in [(expiry, String(signature.reversed())), ("1699999999", signature), ("1700009999", signature)] {
            let head = MemoryHead("GET", "/default/sign_d", [("host", "two.example.test"), ("t", t), ("s", s)], peer: "198.51.100.7")
            #expect(fast(fixture, head) == nil, "t=\(t)")
            guard case .response(let refused) = fixture.service.handle(head.request()) else {
                Issue.record("a refused signature was deferred")
                continue
            }
            #expect(refused.status == 403)
        }
    }

    @Test func eachFormatsHitIsRecordedUnderItsOwnProtocol() throws {
        let fixture = seededFixture()
        _ = fast(fixture, MemoryHead("GET", "/default/d", [("host", "two.example.test")]))
        _ = fast(fixture, MemoryHead("GET", "/resolve", [("name", "two.example.test")]))
        _ = fast(fixture, MemoryHead("GET", "/dns-query", [("dns", try Self.dns("two.example.test"))]))
        let text = MetricsText(fixture.get("/metrics").text)
        for (format, endpoint) in [("emas", "/{account}/d"), ("json", "/resolve"), ("rfc8484", "/dns-query")] {
            let labels = ["protocol": format, "endpoint": endpoint, "source": "cache"]
            #expect(text.sum("httpdns_request_duration_seconds_count", labels) == 1, "\(format)")
        }
    }
}
