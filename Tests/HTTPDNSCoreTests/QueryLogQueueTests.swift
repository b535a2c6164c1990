import Testing

@testable import HTTPDNSCore

/// The bounded queue between the request threads and the query log's writer, and sampling.
@Suite struct QueryLogQueueTests {
    static func entry(_ host: String) -> QueryLogEntry {
        QueryLogEntry(
            account: "shop", time: 1, host: host, type: "A", format: "v1", client: "", source: "cache", status: 200, rcode: "",
            durationMicroseconds: 5, requestID: "", expires: 2)
    }

    @Test func aFullQueueDropsAndCountsInsteadOfWaiting() {
        let queue = QueryLogQueue(capacity: 3)
        for index in 0..<5 { queue.offer(Self.entry("h\(index).test")) }
        #expect(queue.pending == 3)
        #expect(queue.dropped == 2)
        #expect(queue.drain().map(\.host) == ["h0.test", "h1.test", "h2.test"])
        #expect(queue.pending == 0)
        #expect(queue.offer(Self.entry("h5.test")))
        #expect(queue.dropped == 2)
        queue.noteWritten(4)
        #expect(queue.written == 4)
    }

    @Test func aRateOfOneLogsEveryLookupAndZeroNone() {
        let queue = QueryLogQueue()
        #expect((0..<10_000).allSatisfy { _ in queue.sampled(rate: 1) })
        #expect((0..<10_000).allSatisfy { _ in !queue.sampled(rate: 0) })
    }

    @Test func aRateInBetweenLogsAboutThatShare() {
        let queue = QueryLogQueue()
        let logged = (0..<100_000).filter { _ in queue.sampled(rate: 0.1) }.count
        #expect((9_000...11_000).contains(logged), "\(logged)")
    }
}

/// The queue's records: bytes in, entries out, the client masked on the way out.
@Suite struct QueryLogRecordTests {
    @Test func aRecordDecodesToTheEntryWithItsClientMasked() {
        let queue = QueryLogQueue()
        var entry = QueryLogQueueTests.entry(String(repeating: "a", count: 63) + ".example.test")
        entry.clientAddress = IPAddress("2001:db8:1:2ff::1")
        entry.requestID = "req-1"
        entry.rcode = "NXDOMAIN"
        queue.offer(entry)
        queue.offer(QueryLogQueueTests.entry("second.test"))
        let drained = queue.drain()
        #expect(drained.count == 2)
        #expect(drained[0] == entry.completed())
        #expect(drained[0].client == "2001:db8:1:200::/56")
        #expect(drained[1].host == "second.test" && drained[1].client == "")
    }

    @Test func aFullByteBufferDropsToo() {
        let queue = QueryLogQueue(capacity: 100, byteCapacity: 300)
        for index in 0..<10 { queue.offer(QueryLogQueueTests.entry("h\(index).test")) }
        #expect(queue.pending + queue.dropped == 10)
        #expect(queue.dropped > 0 && queue.pending > 0)
        let dropped = queue.dropped
        #expect(queue.drain().count == 10 - dropped)
    }
}
