import HTTPDNSCore
import HTTPDNSWire
import Testing

@testable import HTTPDNSServer

/// The transport rules of plain DNS: the UDP size a client takes, the truncated response sent
/// instead of a larger one, and the two-byte length framing of TCP. Queries are made and
/// responses read with libknot (`HTTPDNSWire`); the integration tests use dnspython.
@Suite struct PlainDNSMessagesTests {
    /// A query for `name` with an OPT record advertising `payloadSize` (none when nil), its
    /// OPT record added by hand.
    func query(_ name: String = "www.example.test", type: UInt16 = 28, payloadSize: UInt16? = nil) throws -> DNSQueryMessage {
        var bytes = try DNSQueryWriter.query(name: name, type: type, id: 0x1234)
        if let payloadSize {
            bytes[11] = 1
            bytes += [0, 0, 41, UInt8(payloadSize >> 8), UInt8(payloadSize & 0xFF), 0, 0, 0, 0, 0, 0]
        }
        return try DNSQueryMessage.parse(bytes)
    }

    @Test func udpLimitIs512WithoutEDNSAndTheAdvertisedSizeCappedWithIt() throws {
        #expect(PlainDNSMessages.udpLimit(try query()) == 512)
        #expect(PlainDNSMessages.udpLimit(try query(payloadSize: 4096)) == 1232)
        #expect(PlainDNSMessages.udpLimit(try query(payloadSize: 1000)) == 1000)
        // Below 512 counts as 512 (RFC 6891 §6.2.5).
        #expect(PlainDNSMessages.udpLimit(try query(payloadSize: 100)) == 512)
    }

    /// A NOERROR response to `query` with `count` AAAA records.
    func response(to query: DNSQueryMessage, count: Int) throws -> [UInt8] {
        let records = (0..<count).map { index in [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [UInt8(index)] }
        return try DNSResponseWriter.response(
            to: query, rcode: DNSResponseWriter.noError, answer: DNSResponseWriter.Answer(type: 28, ttl: 60, records: records))
    }

    @Test func aResponseThatFitsIsSentAsItIs() throws {
        let query = try query()
        let small = try response(to: query, count: 3)
        #expect(small.count <= 512)
        #expect(PlainDNSMessages.fitted(small, query: query, limit: 512) == small)
        #expect(!PlainDNSMessages.isTruncated(small))
    }

    @Test func aLargerOneBecomesTheQuestionAloneWithTCSet() throws {
        let query = try query()
        let large = try response(to: query, count: 40)
        #expect(large.count > 512)
        let fitted = try #require(PlainDNSMessages.fitted(large, query: query, limit: 512))
        #expect(fitted.count <= 512)
        #expect(PlainDNSMessages.isTruncated(fitted))
        let summary = try DNSReplySummary.parse(fitted)
        #expect(summary.questionType == 28)
        #expect(fitted[0] == 0x12 && fitted[1] == 0x34, "the query's ID")
        #expect(fitted[3] & 0x0F == DNSResponseWriter.noError)
        // No records: ANCOUNT, NSCOUNT and ARCOUNT are zero.
        #expect(fitted[6...11].allSatisfy { $0 == 0 }, "\(fitted)")
        // Over TCP (limit 65535), the same response goes whole.
        #expect(PlainDNSMessages.fitted(large, query: query, limit: 65_535) == large)
        // The limit an EDNS client advertises lets it through.
        let ednsQuery = try self.query(payloadSize: 4096)
        let ednsLarge = try response(to: ednsQuery, count: 40)
        #expect(PlainDNSMessages.fitted(ednsLarge, query: ednsQuery, limit: PlainDNSMessages.udpLimit(ednsQuery)) == ednsLarge)
    }

    @Test func framingPutsTheLengthInFrontInNetworkOrder() {
        #expect(PlainDNSMessages.framed([1, 2, 3]) == [0, 3, 1, 2, 3])
        #expect(PlainDNSMessages.framed([UInt8](repeating: 7, count: 300))?.prefix(2) == [1, 44])
        #expect(PlainDNSMessages.framed([UInt8](repeating: 0, count: 65_536)) == nil)
    }

    @Test func theStreamReaderTakesMessagesWhateverPiecesTheyArriveIn() {
        let first = [UInt8](repeating: 0xAA, count: 300), second: [UInt8] = [1, 2, 3]
        let stream = PlainDNSMessages.framed(first)! + PlainDNSMessages.framed(second)! + [0, 0] + [0]
        // Byte by byte, then all at once.
        for pieceSize in [1, 7, stream.count] {
            var reader = PlainDNSMessages.StreamReader()
            var messages: [[UInt8]] = []
            var offset = 0
            while offset < stream.count {
                let end = min(offset + pieceSize, stream.count)
                stream[offset..<end].withUnsafeBytes { reader.append($0) }
                offset = end
                while let message = reader.next() { messages.append(message) }
            }
            // A zero length is an empty message; the lone last byte waits for its second.
            #expect(messages == [first, second, []], "pieces of \(pieceSize)")
            #expect(reader.pendingCount == 1)
        }
    }

    @Test func aReplyGivenDuringTheCallIsKeptAndOneAfterItIsNot() {
        let during = ReplyHandoff()
        #expect(during.keep([1, 2]))
        #expect(during.close() == [1, 2])
        #expect(!during.keep([3]), "after the call, a reply goes through the queue")
        let after = ReplyHandoff()
        #expect(after.close() == nil)
        #expect(!after.keep([4]))
    }
}
