import HTTPDNSWire
import Testing

/// Queries read, responses written and replies summarised through libknot. The fixtures were
/// made by dnspython (`dns.message.make_query`/`make_response`), not by this code.
@Suite("DNS messages")
struct DNSMessageTests {
    /// `WWW.Example.test A`, ID 0x1234, RD, EDNS (payload 1232) with Client Subnet 198.51.100.0/24.
    static let queryWithSubnet = hex(
        "12340100000100000000000103575757074578616d706c650474657374000001000100002904d000000000000b0008000700011800c63364")
    /// `www.example.test AAAA`, ID 7, RD, no EDNS.
    static let plainQuery = hex("00070100000100000000000003777777076578616d706c65047465737400001c0001")
    /// The NXDOMAIN reply to `plainQuery` with the zone's SOA (TTL 300, MINIMUM 45) in the authority.
    static let nxdomainReply = hex(
        "00078103000100000001000003777777076578616d706c65047465737400001c0001c010000600010000012c0026026e73c0100a686f73746d6173746572c0100000000100000e10000004b000093a800000002d"
    )

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
        #expect(
            query.edns?.clientSubnet
                == DNSQueryMessage.ClientSubnet(
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

    /// The OPT record of an EDNS query's answer, byte for byte (payload 1232, no flags; the
    /// Client Subnet echoed with the scope given, its address cut to the source prefix), on
    /// both writers (a new array, and the fast path's buffer over a borrowed query), the same
    /// on every call while the per-thread memory its parts come from is reused.
    @Test(
        arguments: [
            // family, source prefix, address, scope, the option as written
            (UInt16(1), UInt8(24), [UInt8]([198, 51, 100, 7]), UInt8(24), "0008000700011818c63364"),
            (
                UInt16(2), UInt8(56), [UInt8]([0x20, 0x01, 0x0d, 0xb8, 0, 0xaa, 0, 0xbb, 0, 0, 0, 0, 0, 0, 0, 9]), UInt8(56),
                "0008000b000238382001" + "0db800aa00"
            ),
            (UInt16(1), UInt8(0), [UInt8]([0, 0, 0, 0]), UInt8(0), "00080004000100" + "00"),
            (UInt16(0), UInt8(0), [UInt8](), UInt8(0), ""),
        ] as [(UInt16, UInt8, [UInt8], UInt8, String)])
    func anEDNSQuerysAnswerCarriesItsOPTRecord(family: UInt16, prefix: UInt8, address: [UInt8], scope: UInt8, option: String) throws {
        let subnet =
            family == 0
            ? nil : DNSQueryMessage.ClientSubnet(family: family, sourcePrefixLength: prefix, scopePrefixLength: 0, address: address)
        var queryBytes = try DNSQueryWriter.query(name: "www.example.test", type: 1, id: 0x2222, clientSubnet: subnet)
        if subnet == nil {  // an OPT record without options
            queryBytes[11] = 1
            queryBytes += [0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0]
        }
        let optionBytes = Self.hex(option)
        let expectedOPT: [UInt8] = [0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, UInt8(optionBytes.count)] + optionBytes
        let query = try DNSQueryMessage.parse(queryBytes)
        #expect(query.edns?.clientSubnet?.sourcePrefixLength == subnet?.sourcePrefixLength)
        let answer = DNSResponseWriter.Answer(type: 1, ttl: 60, records: [[127, 0, 0, 11]])
        for _ in 0..<3 {
            let bytes = try DNSResponseWriter.response(to: query, rcode: DNSResponseWriter.noError, answer: answer, subnetScope: scope)
            #expect(Array(bytes.suffix(expectedOPT.count)) == expectedOPT, "\(bytes)")
            #expect(bytes[11] == 1, "one additional record")
            #expect(try DNSReplySummary.parse(bytes).answerCount == 1)
            var wire = queryBytes
            let written = try wire.withUnsafeMutableBytes { message in
                try DNSQueryMessage.withQuery(parsing: message) { (borrowed) throws(DNSMessageError) in
                    let target = UnsafeMutableRawBufferPointer.allocate(
                        byteCount: DNSResponseWriter.bound(for: borrowed, answer: answer), alignment: 8)
                    defer { target.deallocate() }
                    target.initializeMemory(as: UInt8.self, repeating: 0xAA)
                    let count = try DNSResponseWriter.write(
                        to: borrowed, rcode: DNSResponseWriter.noError, answer: answer, subnetScope: scope, into: target)
                    return Array(target.prefix(count))
                }
            }
            #expect(written == bytes)
        }
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
            to: try DNSQueryMessage.parse(Self.plainQuery), rcode: DNSResponseWriter.noError,
            answer: .init(type: 28, ttl: 60, records: [[UInt8](repeating: 0, count: 16)]))
        #expect(try DNSReplySummary.parse(positive).soa == nil)
    }

    /// A negative response with an SOA in the authority section reads back with that SOA and the
    /// TTL it was given (below MINIMUM, so the negative TTL is that TTL), and no answer records.
    @Test(arguments: [DNSResponseWriter.nameError, DNSResponseWriter.noError])
    func negativeResponseCarriesTheSOAWithTheGivenTTL(_ rcode: UInt8) throws {
        let query = try DNSQueryMessage.parse(Self.queryWithSubnet)
        let bytes = try DNSResponseWriter.response(
            to: query, rcode: rcode, answer: .init(type: 1, ttl: 17, records: []),
            authority: try .init(soa: Self.zoneSOA, ttl: 17), subnetScope: 0)
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
            // The names become wire form when the authority section is made, before any write.
            _ = try DNSResponseWriter.Authority(soa: long, ttl: 1)
            Issue.record("took an SOA owned by a 64-byte label")
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

/// The borrowed reader and the writer into a caller's buffer (the RFC 8484 fast path's): the
/// same messages as `parse` and `response`, whatever the buffers and libknot's per-thread memory
/// held before.
@Suite("DNS messages in place")
struct DNSMessageInPlaceTests {
    /// `query` with `count` A records (owner: a pointer to the QNAME) in its additional section.
    static func withAdditionalRecords(_ query: [UInt8], count: Int) -> [UInt8] {
        var bytes = query
        bytes[10] = UInt8(count >> 8)
        bytes[11] = UInt8(count & 0xFF)
        for index in 0..<count {
            bytes += [0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, UInt8(index & 0xFF)]
        }
        return bytes
    }

    @Test(arguments: [DNSMessageTests.queryWithSubnet, DNSMessageTests.plainQuery])
    func theBorrowedQueryReadsWhatParseReads(_ bytes: [UInt8]) throws {
        let parsed = try DNSQueryMessage.parse(bytes)
        let wire = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 8)
        defer { wire.deallocate() }
        wire.copyBytes(from: bytes)
        let (fields, questionName, name) = try DNSQueryMessage.withQuery(parsing: wire) { (query) throws(DNSMessageError) in
            (
                [Int(query.id), Int(query.type), Int(query.questionClass), query.recursionDesired ? 1 : 0, query.checkingDisabled ? 1 : 0],
                Array(query.questionName), try query.withName { String(decoding: $0, as: UTF8.self) }
            )
        }
        let edns = try DNSQueryMessage.withQuery(parsing: wire) { $0.edns }
        #expect(
            fields == [
                Int(parsed.id), Int(parsed.type), Int(parsed.questionClass), parsed.recursionDesired ? 1 : 0,
                parsed.checkingDisabled ? 1 : 0,
            ])
        #expect(edns == parsed.edns)
        #expect(questionName == parsed.questionName)
        #expect(name == parsed.name)
    }

    @Test func aResponseWrittenIntoABufferIsTheSameWhateverTheBufferHeld() throws {
        let query = try DNSQueryMessage.parse(DNSMessageTests.queryWithSubnet)
        let answer = DNSResponseWriter.Answer(type: 1, ttl: 287, records: [[127, 0, 0, 11], [127, 0, 0, 12]])
        let expected = try DNSResponseWriter.response(to: query, rcode: DNSResponseWriter.noError, answer: answer, subnetScope: 24)
        for fill: UInt8 in [0x00, 0xAA, 0xFF] {
            var buffer = [UInt8](repeating: fill, count: DNSResponseWriter.bound(for: query, answer: answer))
            let count = try buffer.withUnsafeMutableBytes {
                try DNSResponseWriter.write(to: query, rcode: DNSResponseWriter.noError, answer: answer, subnetScope: 24, into: $0)
            }
            #expect(Array(buffer.prefix(count)) == expected)
        }
    }

    @Test func aShorterResponseAfterALongerOneCarriesNothingOfIt() throws {
        let wire = UnsafeMutableRawBufferPointer.allocate(byteCount: DNSMessageTests.plainQuery.count, alignment: 8)
        defer { wire.deallocate() }
        wire.copyBytes(from: DNSMessageTests.plainQuery)
        let long = DNSResponseWriter.Answer(
            type: 28, ttl: 60, records: (1...8).map { [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [$0] })
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1024, alignment: 8)
        defer { buffer.deallocate() }
        // One buffer, as the fast path's memory may be reused: first the long answer, then NXDOMAIN.
        let (written, fresh) = try DNSQueryMessage.withQuery(parsing: wire) { (query) throws(DNSMessageError) in
            _ = try DNSResponseWriter.write(to: query, rcode: DNSResponseWriter.noError, answer: long, into: buffer)
            let count = try DNSResponseWriter.write(to: query, rcode: DNSResponseWriter.nameError, answer: nil, into: buffer)
            return (Array(buffer.prefix(count)), try DNSResponseWriter.response(to: query, rcode: DNSResponseWriter.nameError, answer: nil))
        }
        #expect(written == fresh)
        let reply = try DNSReplySummary.parse(written)
        #expect(reply.rcode == 3)
        #expect(reply.answerCount == 0)
    }

    @Test func inlineIPv4RecordsAreWrittenAsTheirRDATAList() throws {
        let query = try DNSQueryMessage.parse(DNSMessageTests.queryWithSubnet)
        for count in 0...3 {
            let numbers: [UInt32] = [0x7F00_000B, 0xC000_020A, 0x0A00_0001]
            let inline = DNSResponseWriter.Answer(ttl: 99, ipv4: numbers[0], numbers[1], numbers[2], count: count)
            let list = DNSResponseWriter.Answer(
                type: 1, ttl: 99, records: numbers.prefix(count).map { withUnsafeBytes(of: $0.bigEndian) { Array($0) } })
            #expect(inline.records == list.records)
            #expect(
                try DNSResponseWriter.response(to: query, rcode: 0, answer: inline)
                    == DNSResponseWriter.response(to: query, rcode: 0, answer: list))
            #expect(DNSResponseWriter.bound(for: query, answer: inline) == DNSResponseWriter.bound(for: query, answer: list))
        }
    }

    /// 600 records need more of libknot's memory than the per-thread block holds: the rest comes
    /// from `malloc`, and the block serves the next message as before.
    @Test func aQueryThatOutgrowsTheThreadsBlockStillParses() throws {
        let large = Self.withAdditionalRecords(DNSMessageTests.plainQuery, count: 600)
        for _ in 0..<3 {
            let query = try DNSQueryMessage.parse(large)
            #expect(query.name == "www.example.test")
            #expect(query.type == 28)
            let response = try DNSResponseWriter.response(
                to: query, rcode: 0, answer: .init(type: 28, ttl: 5, records: [[UInt8](repeating: 1, count: 16)]))
            #expect(try DNSReplySummary.parse(response).answerCount == 1)
            #expect(try DNSQueryMessage.parse(DNSMessageTests.plainQuery).name == "www.example.test")
        }
    }
}

@Suite("DNS query writer")
struct DNSQueryWriterTests {
    /// A Client Subnet's address (kept inline) reads back as set, and equality sees every byte
    /// and the address's length.
    @Test func aClientSubnetsAddressReadsBackAsSetAndTakesPartInEquality() {
        typealias Subnet = DNSQueryMessage.ClientSubnet
        var subnet = Subnet(family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, address: [198, 51, 100, 0])
        #expect(subnet.address == [198, 51, 100, 0])
        #expect(subnet.withAddress { Array($0) } == [198, 51, 100, 0])
        let before = subnet
        subnet.address = [198, 51, 101, 0]
        #expect(subnet != before && subnet.address == [198, 51, 101, 0])
        let three = Subnet(family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, address: [0, 0, 0])
        #expect(three != Subnet(family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, address: [0, 0, 0, 0]))
    }

    @Test func aWrittenQueryReadsBackWithItsNameTypeIDAndSubnet() throws {
        let subnet = DNSQueryMessage.ClientSubnet(
            family: 2, sourcePrefixLength: 56, scopePrefixLength: 0,
            address: [0x20, 0x01, 0x0d, 0xb8, 0, 0xaa, 0xbb] + [UInt8](repeating: 0, count: 9))
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
