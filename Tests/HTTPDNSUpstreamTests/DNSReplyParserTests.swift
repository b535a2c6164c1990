import HTTPDNSCore
import HTTPDNSCrypto
import HTTPDNSWire
import Testing

@testable import HTTPDNSUpstream

/// DNS reply parsing (the answer walk for addresses, header RCODE, SOA walk for negative TTLs).
struct DNSReplyParserTests {
    @Test func aRecordsGiveAddressesAndMinimumTTL() throws {
        var message = DNSTestMessage()
        message.answers = [
            ("www.example.test", 1, 300, [192, 0, 2, 10]),
            ("www.example.test", 1, 200, [192, 0, 2, 11]),
        ]
        let answer = try DNSReplyParser.parse(message.bytes, family: .a).get()
        #expect(answer.addresses == ["192.0.2.10", "192.0.2.11"])
        #expect(answer.ttl == 200)
        #expect(!answer.nxdomain)
    }

    @Test func aaaaRecordsGiveCanonicalText() throws {
        var message = DNSTestMessage()
        message.question.type = 28
        message.answers = [("www.example.test", 28, 90, [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1])]
        let answer = try DNSReplyParser.parse(message.bytes, family: .aaaa).get()
        #expect(answer.addresses == ["2001:db8::1"])
        #expect(answer.ttl == 90)
    }

    @Test func cnameChainTTLCapsAddressTTL() throws {
        var message = DNSTestMessage()
        message.question.name = "api.example.test"
        message.answers = [
            ("api.example.test", 5, 60, DNSTestMessage.name("www.example.test")),
            ("www.example.test", 1, 300, [127, 0, 0, 11]),
        ]
        let answer = try DNSReplyParser.parse(message.bytes, family: .a).get()
        #expect(answer.addresses == ["127.0.0.11"])
        #expect(answer.ttl == 60)
    }

    @Test func aReplyEndingInACNAMEWithoutAddressesNamesTheTargetAndTheChainsMinimumTTL() throws {
        var message = DNSTestMessage()
        message.question.name = "api.example.test"
        message.answers = [
            ("api.example.test", 5, 60, DNSTestMessage.name("mid.example.test")),
            ("mid.example.test", 5, 30, DNSTestMessage.name("www.example.test")),
        ]
        let answer = try DNSReplyParser.parse(message.bytes, family: .a).get()
        #expect(answer.addresses.isEmpty && !answer.nxdomain)
        #expect(answer.cnameTarget == HostName("www.example.test"))
        #expect(answer.ttl == 30)
    }

    @Test func aCNAMEThatLoopsInsideTheReplyStillNamesATargetForTheEngineToCatch() throws {
        var message = DNSTestMessage()
        message.question.name = "loop1.example.test"
        message.answers = [
            ("loop1.example.test", 5, 60, DNSTestMessage.name("loop2.example.test")),
            ("loop2.example.test", 5, 60, DNSTestMessage.name("loop1.example.test")),
        ]
        let answer = try DNSReplyParser.parse(message.bytes, family: .a).get()
        #expect(answer.cnameTarget == HostName("loop2.example.test"))
    }

    /// Captured from unbound 1.17 (auth-zone): api.example.test A, with name compression.
    @Test func capturedCompressedCNAMEReplyParses() throws {
        let bytes = hexBytes(
            "00008580000100030000000003617069076578616d706c6504746573740000010001c00c000500010000003c0006037777"
                + "77c010c02e000100010000012c00047f00000bc02e000100010000012c00047f00000c")
        let answer = try DNSReplyParser.parse(bytes, family: .a).get()
        #expect(answer.addresses == ["127.0.0.11", "127.0.0.12"])
        #expect(answer.ttl == 60)
    }

    @Test func nxdomainTakesNegativeTTLFromAuthoritySOA() throws {
        var message = DNSTestMessage()
        message.rcode = 3
        message.authority = [("example.test", 6, 3600, DNSTestMessage.soa(minimum: 45))]
        let answer = try DNSReplyParser.parse(message.bytes, family: .a).get()
        #expect(answer.nxdomain)
        #expect(answer.addresses.isEmpty)
        #expect(answer.negativeTTL == 45)
    }

    @Test func negativeTTLIsCappedBySOARecordTTL() throws {
        var message = DNSTestMessage()
        message.rcode = 3
        message.authority = [("example.test", 6, 10, DNSTestMessage.soa(minimum: 45))]
        #expect(try DNSReplyParser.parse(message.bytes, family: .a).get().negativeTTL == 10)
    }

    /// Captured from unbound: NXDOMAIN for nope.example.test with a compressed SOA (TTL 45, MINIMUM 45).
    @Test func capturedNXDOMAINWithCompressedSOAParses() throws {
        let bytes = hexBytes(
            "000085830001000000010000046e6f7065076578616d706c6504746573740000010001c011000600010000002d0021026e73"
                + "c0110561646d696ec0110000000100000e1000000258000151800000002d")
        let answer = try DNSReplyParser.parse(bytes, family: .a).get()
        #expect(answer.nxdomain)
        #expect(answer.negativeTTL == 45)
    }

    @Test func noErrorWithoutRecordsIsNODATAWithSOAMinimum() throws {
        var message = DNSTestMessage()
        message.question.type = 28
        message.authority = [("example.test", 6, 3600, DNSTestMessage.soa(minimum: 120))]
        let answer = try DNSReplyParser.parse(message.bytes, family: .aaaa).get()
        #expect(answer.addresses.isEmpty)
        #expect(!answer.nxdomain)
        #expect(answer.negativeTTL == 120)
    }

    /// The SOA of a negative reply is kept whole (names as libknot writes them), for the cache
    /// to send on; the captured reply compresses its names.
    @Test func negativeRepliesKeepTheAuthoritySOA() throws {
        let captured = hexBytes(
            "000085830001000000010000046e6f7065076578616d706c6504746573740000010001c011000600010000002d0021026e73"
                + "c0110561646d696ec0110000000100000e1000000258000151800000002d")
        let nxdomain = try DNSReplyParser.parse(captured, family: .a).get()
        #expect(nxdomain.soa?.description == "example.test. ns.example.test. admin.example.test. 1 3600 600 86400 45")
        var message = DNSTestMessage()
        message.question.type = 28
        message.authority = [("Example.test", 6, 3600, DNSTestMessage.soa(minimum: 120))]
        let nodata = try DNSReplyParser.parse(message.bytes, family: .aaaa).get()
        #expect(!nodata.nxdomain)
        // libknot's parser lowers the owner's case.
        #expect(nodata.soa?.description == "example.test. ns.example.test. admin.example.test. 1 3600 600 86400 120")
        message.authority = []
        #expect(try DNSReplyParser.parse(message.bytes, family: .aaaa).get().soa == nil)
    }

    @Test func noErrorWithOnlyOtherFamilyIsNODATA() throws {
        var message = DNSTestMessage()
        message.answers = [("www.example.test", 1, 300, [192, 0, 2, 10])]
        let answer = try DNSReplyParser.parse(message.bytes, family: .aaaa).get()
        #expect(answer.addresses.isEmpty)
        #expect(answer.negativeTTL == nil)
    }

    @Test(arguments: [UInt8(2), 5, 4, 1])
    func failureRcodeIsServerFailure(rcode: UInt8) {
        var message = DNSTestMessage()
        message.rcode = rcode
        guard case .failure(let error) = DNSReplyParser.parse(message.bytes, family: .a) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .serverFailure)
        #expect(error.underlying == Int(rcode))
    }

    @Test func shortOrGarbledRepliesAreMalformed() {
        var good = DNSTestMessage()
        good.answers = [("www.example.test", 1, 300, [192, 0, 2, 10])]
        var query = good
        query.isReply = false
        var nx = DNSTestMessage()
        nx.rcode = 3
        nx.authority = [("example.test", 6, 3600, DNSTestMessage.soa(minimum: 45))]
        let cases: [[UInt8]] = [
            [],
            [0, 0, 0x81],
            Array(good.bytes.dropLast(3)),  // answer RDATA cut short
            Array(nx.bytes.dropLast(10)),  // SOA cut short
            query.bytes,  // not a reply
            [0, 0, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF],
        ]
        for bytes in cases {
            guard case .failure(let error) = DNSReplyParser.parse(bytes, family: .a) else {
                Issue.record("expected malformed for \(bytes)")
                continue
            }
            #expect(error.code == .malformed, "\(bytes)")
        }
    }
}

/// Queries written for RFC 8484 GETs, read back by libknot.
struct DNSQueryBuilderTests {
    @Test func queryHasIDZeroRecursionDesiredAndQuestion() throws {
        let bytes = DNSQueryBuilder.query(host: HostName("www.example.test")!, family: .a)
        // The exact bytes dnss was checked with (TEST-SERVERS.md): AAABAAABAAAAAAAAA3d3dwdleGFtcGxlBHRlc3QAAAEAAQ
        #expect(Base64URL.encode(bytes) == "AAABAAABAAAAAAAAA3d3dwdleGFtcGxlBHRlc3QAAAEAAQ")
    }

    @Test func clientSubnetAddsOPTWithECSOption() throws {
        let bytes = DNSQueryBuilder.query(host: HostName("a.example")!, family: .aaaa, clientSubnet: "1.2.3.77/20")
        let question: [UInt8] = [1, 0x61, 7] + Array("example".utf8) + [0, 0, 28, 0, 1]
        // OPT: root, type 41, payload 1232, TTL 0, RDLENGTH 11; ECS: code 8, length 7, family 1,
        // source /20, scope 0, 3 address bytes with host bits cleared.
        let opt: [UInt8] = [0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 11, 0, 8, 0, 7, 0, 1, 20, 0, 1, 2, 0]
        #expect(bytes == [0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1] + question + opt)
    }

    /// Names of one label, of 63-byte labels, of the longest length, with `_` and `-`: libknot
    /// reads back the name, type, and subnet that were written.
    @Test(arguments: [
        "localhost", "_sip._tcp.example.test", "a-b.c",
        String(repeating: "a", count: 63) + "." + String(repeating: "b", count: 63),
        (0..<4).map { _ in String(repeating: "x", count: 62) }.joined(separator: ".") + ".z",
    ])
    func libknotReadsTheQuestionBack(host: String) throws {
        let name = try #require(HostName(host))
        let cases: [(RecordFamily, String?)] = [(.a, nil), (.aaaa, "2001:db8:aa:bbcc::1"), (.a, "198.51.100.7/24")]
        for (family, subnet) in cases {
            let bytes = DNSQueryBuilder.query(host: name, family: family, clientSubnet: subnet)
            #expect(bytes.count <= DNSQueryBuilder.maximumLength)
            let message = try DNSQueryMessage.parse(bytes)
            #expect(message.name == host)
            #expect(message.type == family.rawValue)
            #expect(message.questionClass == 1)
            #expect(message.id == 0 && message.recursionDesired)
            #expect(message.edns?.clientSubnet?.sourcePrefixLength == subnet.map { $0.hasSuffix("/24") ? 24 : 56 })
        }
    }

    @Test func ipv6SubnetDefaultsToSlash56() throws {
        let option = try #require(DNSQueryBuilder.clientSubnetOption("2001:db8:aa:bbcc::1"))
        #expect(option == [0, 8, 0, 11, 0, 2, 56, 0, 0x20, 0x01, 0x0d, 0xb8, 0, 0xaa, 0xbb])
        #expect(DNSQueryBuilder.clientSubnetOption("nonsense/8") == nil)
        #expect(DNSQueryBuilder.clientSubnetOption("1.2.3.4/33") == nil)
    }
}
