import HTTPDNSWire
import Testing

/// Queries read, responses written and replies summarised through libknot. The fixtures were
/// made by dnspython (`dns.message.make_query`/`make_response`), not by this code.
@Suite("DNS messages")
struct DNSMessageTests {
    /// `WWW.Example.test A`, ID 0x1234, RD, EDNS (payload 1232) with Client Subnet 198.51.100.0/24.
    static let queryWithSubnet = hex("12340100000100000000000103575757074578616d706c650474657374000001000100002904d000000000000b0008000700011800c63364")
    /// `www.example.test AAAA`, ID 7, RD, no EDNS.
    static let plainQuery = hex("00070100000100000000000003777777076578616d706c65047465737400001c0001")
    /// The NXDOMAIN reply to `plainQuery` with the zone's SOA (TTL 300, MINIMUM 45) in the authority.
    static let nxdomainReply = hex(
        "00078103000100000001000003777777076578616d706c65047465737400001c0001c010000600010000012c0026026e73c0100a686f73746d6173746572c0100000000100000e10000004b000093a800000002d")

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    @Test func queryGivesIDLowerCaseNameTypeAndClientSubnet() throws {
        let query = try DNSQueryMessage.parse(Self.queryWithSubnet)
        #expect(query.id == 0x1234)
        #expect(query.name == "www.example.test")
        #expect(query.type == 1)
        #expect(query.questionClass == 1)
        #expect(query.recursionDesired)
        #expect(query.edns?.payloadSize == 1232)
        #expect(query.edns?.clientSubnet == DNSQueryMessage.ClientSubnet(
            family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, address: [198, 51, 100, 0]))
        let plain = try DNSQueryMessage.parse(Self.plainQuery)
        #expect(plain.type == 28)
        #expect(plain.edns == nil)
    }

    @Test(arguments: [
        [UInt8](),
        [0, 1, 2],
        Array(plainQuery.dropLast(3)),
        plainQuery + [0xFF, 0xFF, 0xFF],
        [UInt8](repeating: 0xC0, count: 40),
    ])
    func truncatedOrGarbledQueriesAreMalformed(_ bytes: [UInt8]) {
        #expect(throws: DNSMessageError.self) { try DNSQueryMessage.parse(bytes) }
        do {
            _ = try DNSQueryMessage.parse(bytes)
        } catch {
            #expect(error.code == .malformed, "\(error)")
        }
    }

    @Test func aReplyOrAQueryWithoutQuestionIsNotAQuery() {
        for bytes in [Self.nxdomainReply, Array(Self.plainQuery.prefix(4)) + [0, 0, 0, 0, 0, 0, 0, 0]] {
            do {
                _ = try DNSQueryMessage.parse(bytes)
                Issue.record("accepted \(bytes)")
            } catch {
                #expect(error.code == .unexpected, "\(error)")
            }
        }
    }

    @Test func responseEchoesIDAndQuestionAndCarriesTheRecords() throws {
        let query = try DNSQueryMessage.parse(Self.queryWithSubnet)
        let bytes = try DNSResponseWriter.response(
            to: query, rcode: DNSResponseWriter.noError,
            answer: .init(type: 1, ttl: 287, records: [[127, 0, 0, 11], [127, 0, 0, 12]]), subnetScope: 24)
        let reply = try DNSReplySummary.parse(bytes)
        #expect(reply.id == 0x1234)
        #expect(reply.rcode == 0)
        #expect(reply.answerCount == 2)
        #expect(reply.minimumTTL == 287)
        #expect(reply.questionType == 1)
        // The question as sent (case kept), and an OPT record echoing the subnet with scope 24.
        #expect(bytes[12..<(12 + query.questionName.count)].elementsEqual(query.questionName))
        #expect(bytes.count > 12 + query.questionName.count + 4 + 2 * 16)
        #expect(bytes.suffix(7) == [0x00, 0x01, 24, 24, 198, 51, 100])
    }

    @Test func nameErrorResponseHasRcode3AndNoRecords() throws {
        let query = try DNSQueryMessage.parse(Self.plainQuery)
        let bytes = try DNSResponseWriter.response(to: query, rcode: DNSResponseWriter.nameError, answer: nil)
        let reply = try DNSReplySummary.parse(bytes)
        #expect(reply.id == 7)
        #expect(reply.rcode == 3)
        #expect(reply.answerCount == 0)
        #expect(reply.minimumTTL == nil)
    }

    @Test func replySummaryTakesNegativeTTLFromTheAuthoritySOA() throws {
        let reply = try DNSReplySummary.parse(Self.nxdomainReply)
        #expect(reply.rcode == 3)
        #expect(reply.negativeTTL == 45)
        #expect(reply.minimumTTL == 45)
        #expect(reply.answerCount == 0)
        #expect(throws: DNSMessageError.self) { try DNSReplySummary.parse(Self.plainQuery) }
    }

    /// The SOA of `nxdomainReply`, as libknot writes its names.
    static let zoneSOA = DNSSOARecord(
        zone: "example.test.", primary: "ns.example.test.", mailbox: "hostmaster.example.test.", serial: 1, refresh: 3600, retry: 1200,
        expire: 604_800, minimum: 45)

    @Test func replySummaryKeepsTheAuthoritySOA() throws {
        #expect(try DNSReplySummary.parse(Self.nxdomainReply).soa == Self.zoneSOA)
        let positive = try DNSResponseWriter.response(
            to: try DNSQueryMessage.parse(Self.plainQuery), rcode: DNSResponseWriter.noError, answer: .init(type: 28, ttl: 60, records: [[UInt8](repeating: 0, count: 16)]))
        #expect(try DNSReplySummary.parse(positive).soa == nil)
    }

    /// A negative response with an SOA in the authority section reads back with that SOA and the
    /// TTL it was given (below MINIMUM, so the negative TTL is that TTL), and no answer records.
    @Test(arguments: [DNSResponseWriter.nameError, DNSResponseWriter.noError])
    func negativeResponseCarriesTheSOAWithTheGivenTTL(_ rcode: UInt8) throws {
        let query = try DNSQueryMessage.parse(Self.queryWithSubnet)
        let bytes = try DNSResponseWriter.response(
            to: query, rcode: rcode, answer: .init(type: 1, ttl: 17, records: []),
            authority: .init(soa: Self.zoneSOA, ttl: 17), subnetScope: 0)
        let reply = try DNSReplySummary.parse(bytes)
        #expect(reply.rcode == UInt16(rcode))
        #expect(reply.id == 0x1234)
        #expect(reply.answerCount == 0)
        #expect(reply.soa == Self.zoneSOA)
        #expect(reply.negativeTTL == 17)
        #expect(reply.minimumTTL == 17)
        // Header counts: no answer, one authority record, the OPT in the additional section.
        #expect(Array(bytes[6..<12]) == [0, 0, 0, 1, 0, 1])
    }

    @Test func soaNamesLibknotCannotReadAreMalformed() {
        let long = DNSSOARecord(
            zone: String(repeating: "x", count: 64) + ".test.", primary: "ns.test.", mailbox: "h.test.", serial: 1, refresh: 1, retry: 1,
            expire: 1, minimum: 1)
        do {
            _ = try DNSResponseWriter.response(
                to: try DNSQueryMessage.parse(Self.plainQuery), rcode: DNSResponseWriter.nameError, answer: nil, authority: .init(soa: long, ttl: 1))
            Issue.record("wrote an SOA owned by a 64-byte label")
        } catch {
            #expect(error.code == .malformed)
        }
    }

    @Test func soaPresentationDataSplitsOnSpacesAndTabsAndItsNamesGetTheFinalDot() throws {
        let soa = try DNSSOARecord(zone: "Example.TEST", data: "ns.example.test  hostmaster.example.test.\t1 3600 1200 604800 45")
        #expect(soa.zone == "Example.TEST.")
        #expect(soa.primary == "ns.example.test.")
        #expect(soa.mailbox == "hostmaster.example.test.")
        #expect([soa.serial, soa.refresh, soa.retry, soa.expire, soa.minimum] == [1, 3600, 1200, 604_800, 45])
    }

    @Test(arguments: [
        "ns.example.test. hostmaster.example.test. 1 3600 1200 604800",
        "ns.example.test. hostmaster.example.test. 1 3600 1200 604800 45 9",
        "ns.example.test. hostmaster.example.test. 1 3600 1200 604800 -45",
        "ns.example.test. hostmaster.example.test. 1 3600 1200 604800 4294967296",
        "ns..example.test. hostmaster.example.test. 1 3600 1200 604800 45",
    ])
    func soaPresentationDataThatIsNotSevenFieldsOfTheRightKindIsMalformed(_ data: String) {
        do {
            _ = try DNSSOARecord(zone: "example.test.", data: data)
            Issue.record("read '\(data)'")
        } catch {
            #expect(error.code == .malformed)
        }
    }

    @Test func forwardedReplyTakesTheQueryID() throws {
        let query = try DNSQueryMessage.parse(Self.queryWithSubnet)
        let forwarded = DNSResponseWriter.forwarded(Self.nxdomainReply, to: query)
        #expect(try DNSReplySummary.parse(forwarded).id == 0x1234)
        #expect(forwarded.dropFirst(2) == Self.nxdomainReply.dropFirst(2))
    }
}

@Suite("DNS query writer")
struct DNSQueryWriterTests {
    @Test func aWrittenQueryReadsBackWithItsNameTypeIDAndSubnet() throws {
        let subnet = DNSQueryMessage.ClientSubnet(family: 2, sourcePrefixLength: 56, scopePrefixLength: 0, address: [0x20, 0x01, 0x0d, 0xb8, 0, 0xaa, 0xbb] + [UInt8](repeating: 0, count: 9))
        let query = try DNSQueryMessage.parse(try DNSQueryWriter.query(name: "Mail.Example.Test.", type: 15, id: 99, clientSubnet: subnet))
        #expect(query.name == "mail.example.test")
        #expect(query.type == 15)
        #expect(query.id == 99)
        #expect(query.edns?.clientSubnet == subnet)
    }

    @Test(arguments: ["a..b", "bad\u{0}name", String(repeating: "x", count: 64) + ".test"])
    func namesLibknotCannotWriteAreMalformed(_ name: String) {
        do {
            _ = try DNSQueryWriter.query(name: name, type: 1)
            Issue.record("wrote '\(name)'")
        } catch {
            #expect(error.code == .malformed)
        }
    }
}
