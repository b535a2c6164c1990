import Testing

@testable import HTTPDNSWire

/// The region libknot's allocations come from on the request path (`KnotArena`): what does not
/// fit the thread's block gets chunks of its own, and all of them are freed when the scope that
/// took them ends, nested scopes included.
@Suite("Knot arena")
struct KnotArenaTests {
    @Test func chunksBeyondTheBlockLiveUntilTheirScopeEnds() throws {
        // 600 records in a query parsed in place: more of libknot's memory than the block holds.
        var large = DNSMessageInPlaceTests.withAdditionalRecords(DNSMessageTests.plainQuery, count: 600)
        #expect(KnotArena.chunkCount == 0)
        let (inside, nested) = try large.withUnsafeMutableBytes { wire in
            try DNSQueryMessage.withQuery(parsing: wire) { (query) throws(DNSMessageError) -> (Int, Int) in
                #expect(query.type == 28)
                let outer = KnotArena.chunkCount
                // A nested scope (a response written while the query is held) frees only its own.
                let response = try DNSResponseWriter.response(
                    to: query, rcode: 0, answer: .init(type: 28, ttl: 5, records: [[UInt8](repeating: 1, count: 16)]))
                #expect(try DNSReplySummary.parse(response).answerCount == 1)
                return (outer, KnotArena.chunkCount)
            }
        }
        #expect(inside > 0)
        #expect(nested == inside)
        #expect(KnotArena.chunkCount == 0)
        // The block serves the next message as before.
        #expect(try DNSQueryMessage.parse(DNSMessageTests.plainQuery).name == "www.example.test")
    }

    /// A query that fits the block takes no chunk at all.
    @Test func aUsualQueryTakesNoChunk() throws {
        var wire = DNSMessageTests.queryWithSubnet
        let chunks = try wire.withUnsafeMutableBytes { wire in
            try DNSQueryMessage.withQuery(parsing: wire) { (_) throws(DNSMessageError) in KnotArena.chunkCount }
        }
        #expect(chunks == 0)
    }
}
