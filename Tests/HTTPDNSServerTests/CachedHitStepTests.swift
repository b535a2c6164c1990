import HTTPDNSCore
import HTTPDNSCrypto
import HTTPDNSWire
import Testing

@testable import HTTPDNSServer

/// The pipeline's hit step (`HTTPDNSService.cachedHit`): a single cached name of a route with a
/// hit reader is answered by that reader on the request the general path copied
/// (`HTTPRequest.withHead`), with the bytes of the fast path; anything else is left to the handler.
@Suite struct CachedHitStepTests {
    private func seededFixture() -> ServiceFixture {
        let fixture = ServiceFixture()
        fixture.seed([
            ("two.example.test", .a, fixture.entry(["127.0.0.11", "127.0.0.12"], ttl: 300)),
            ("two.example.test", .aaaa, fixture.entry(["::1"], ttl: 120)),
        ])
        return fixture
    }

    private static func dns(_ name: String, type: UInt16 = 1) throws -> String {
        Base64URL.encode(try DNSQueryWriter.query(name: name, type: type, id: 7, clientSubnet: nil))
    }

    @Test(
        arguments: [
            ("/v1/default/resolve", [("host", "two.example.test")]),
            ("/v1/default/resolve", [("host", "TWO.example.test"), ("type", "AAAA"), ("short", "1")]),
            ("/default/d", [("host", "two.example.test"), ("ip", "192.0.2.9")]),
            ("/resolve", [("name", "two.example.test"), ("type", "28")]),
        ] as [(String, [(String, String?)])])
    func aSingleCachedNameIsAnsweredByTheHitReaderOnTheCopiedRequest(path: String, arguments: [(String, String?)]) throws {
        let fixture = seededFixture()
        let head = MemoryHead("GET", path, arguments, peer: "198.51.100.7")
        let step = try #require(fixture.hitStepResponse(head.request()), "the hit step left a cached name to the handler")
        guard let fast = fixture.service.fastResponse(head) else {
            Issue.record("the fast path did not answer a cached name")
            return
        }
        #expect(step.status == 200)
        #expect(step.body == fast.body)
        #expect(step.contentType == (fast.contentType ?? ServerResponse.jsonType))
        #expect(step.source == .cache)
    }

    @Test func anRFC8484QueryIsAnsweredByItsHitReaderToo() throws {
        let fixture = seededFixture()
        let head = MemoryHead("GET", "/dns-query", [("dns", try Self.dns("two.example.test"))])
        let step = try #require(fixture.hitStepResponse(head.request()))
        #expect(step.body == fixture.service.fastResponse(head)?.body)
        #expect(step.contentType == "application/dns-message")
    }

    @Test(
        arguments: [
            ("/v1/default/resolve", [("host", "miss.example.test")]),
            ("/v1/default/resolve", [("host", "two.example.test"), ("type", "both")]),
            ("/v1/default/resolve", [("host", "two.example.test,two.example.test")]),
            ("/v1/default/resolve", [("host", "two.example.test"), ("type", "MX")]),
            ("/default/d", [("host", "two.example.test"), ("query", "4,6")]),
            ("/resolve", [("name", "two.example.test"), ("short", "maybe")]),
            ("/v1/default/cache", [("host", "two.example.test")]),
        ] as [(String, [(String, String?)])])
    func everythingElseIsLeftToTheHandler(path: String, arguments: [(String, String?)]) {
        let fixture = seededFixture()
        #expect(fixture.hitStepResponse(MemoryHead("GET", path, arguments).request()) == nil)
    }

    @Test func theCopiedHeadReadsArgumentsAsTheConnectionsHeadDoes() throws {
        var request = MemoryHead(
            "GET", "/v1/default/resolve",
            [("host", "a.test"), ("host", "b.test"), ("flag", nil), ("other", "x"), ("type", "A")], peer: "192.0.2.1"
        ).request()
        request.accept = "application/dns-json"
        request.withHead { head in
            guard let found = head.arguments(ArgumentNames("host", "type", "flag")) else {
                Issue.record("arguments refused")
                return
            }
            #expect(found[0].map { String(decoding: $0, as: UTF8.self) } == "a.test")
            #expect(found[1].map { String(decoding: $0, as: UTF8.self) } == "A")
            #expect(found[2]?.count == 0)
            #expect(found.others == 1)
            #expect(head.header("Accept").map { String(decoding: $0, as: UTF8.self) } == "application/dns-json")
            #expect(head.header("Content-Type") == nil)
            #expect(head.peerAddress?.text == "192.0.2.1")
            #expect(String(decoding: head.path, as: UTF8.self) == "/v1/default/resolve")
        }
    }
}
