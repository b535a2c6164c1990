import HTTPDNSCore
import HTTPDNSWire
import Synchronization
import Testing

@testable import HTTPDNSServer

/// `HTTPDNSService.answerPlainDNS` in process, on cached answers: the RFC 8484 question logic
/// over UDP, TCP and DoT, what is dropped and what is REFUSED, and the counters.
@Suite struct PlainDNSAnswerTests {
    /// What one call gave: whether a reply was promised, and the replies received.
    struct Outcome {
        var promised: Bool
        var replies: [[UInt8]]
    }

    func ask(
        _ fixture: ServiceFixture, _ message: [UInt8], transport: PlainDNSMessages.Transport, metrics: PlainDNSMetrics,
        account: String = "default", peer: String = "192.0.2.50"
    ) -> Outcome {
        let replies = Mutex<[[UInt8]]>([])
        let promised = fixture.service.answerPlainDNS(
            message, account: account, peer: PeerAddress(peer)!, transport: transport, metrics: metrics
        ) { reply in replies.withLock { $0.append(reply) } }
        return Outcome(promised: promised, replies: replies.withLock { $0 })
    }

    func fixture(rate: Double = 0, burst: Int = 0, _ change: (inout AccountConfig) -> Void = { _ in }) -> ServiceFixture {
        let fixture = ServiceFixture(config: .test(change), limits: HTTPDNSService.Limits(clientRate: .init(perSecond: rate, burst: burst)))
        fixture.seed([("www.example.test", .a, fixture.entry(["192.0.2.10", "192.0.2.11"], ttl: 287))])
        return fixture
    }

    @Test func aCachedAnswerComesAtOnceOverEitherTransport() throws {
        let fixture = fixture(), metrics = PlainDNSMetrics()
        let query = try DNSQueryWriter.query(name: "www.example.test", type: 1, id: 77)
        for transport in PlainDNSMessages.Transport.allCases {
            let outcome = ask(fixture, query, transport: transport, metrics: metrics)
            #expect(outcome.promised)
            let reply = try #require(outcome.replies.first)
            #expect(outcome.replies.count == 1)
            #expect(reply[0] == 0 && reply[1] == 77)
            #expect(reply[3] & 0x0F == DNSResponseWriter.noError)
            #expect(try DNSReplySummary.parse(reply).minimumTTL == 287)
        }
        #expect(metrics.queries.map(\.value) == [1, 1, 1])
    }

    @Test func malformedMessagesAreCountedAndGetNoReply() {
        let fixture = fixture(), metrics = PlainDNSMetrics()
        for message in [[], [1, 2, 3], [UInt8](repeating: 0xFF, count: 40)] as [[UInt8]] {
            let outcome = ask(fixture, message, transport: .udp, metrics: metrics)
            #expect(!outcome.promised && outcome.replies.isEmpty)
        }
        #expect(metrics.malformed[PlainDNSMetrics.index(.udp)].value == 3)
        #expect(metrics.queries[PlainDNSMetrics.index(.udp)].value == 0)
    }

    @Test func overTheClientRateUDPIsDroppedAndTCPRefused() throws {
        let fixture = fixture(rate: 1, burst: 1), metrics = PlainDNSMetrics()
        let query = try DNSQueryWriter.query(name: "www.example.test", type: 1, id: 5)
        #expect(ask(fixture, query, transport: .udp, metrics: metrics).replies.count == 1)
        let dropped = ask(fixture, query, transport: .udp, metrics: metrics)
        #expect(!dropped.promised && dropped.replies.isEmpty)
        // Over TCP and DoT, whose source cannot be spoofed, REFUSED.
        for transport in [PlainDNSMessages.Transport.tcp, .dot] {
            let refused = ask(fixture, query, transport: transport, metrics: metrics)
            #expect(refused.promised)
            #expect(refused.replies.first.map { $0[3] & 0x0F } == DNSResponseWriter.refused)
        }
        // Another client has its own bucket.
        #expect(ask(fixture, query, transport: .udp, metrics: metrics, peer: "192.0.2.51").replies.count == 1)
        #expect(metrics.rateLimited.map(\.value) == [1, 1, 1])
        #expect(fixture.engine.metrics.clientRateRefusals.value == 3)
    }

    @Test func anUnknownAccountAndARefusedNameAreREFUSED() throws {
        let policy = try DomainPolicy(mode: .listed, allow: ["allowed.test"], deny: [])
        let fixture = fixture { $0.domains = policy }, metrics = PlainDNSMetrics()
        for (name, type, account) in [
            ("www.example.test", 1, "nosuch"), ("www.example.test", 1, "default"), ("www.example.test", 16, "default"),
        ] {
            let query = try DNSQueryWriter.query(name: name, type: UInt16(type), id: 9)
            let outcome = ask(fixture, query, transport: .udp, metrics: metrics, account: account)
            #expect(outcome.replies.first.map { $0[3] & 0x0F } == DNSResponseWriter.refused, "\(name) \(type) \(account)")
        }
    }
}
