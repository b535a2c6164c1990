import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSStore

/// The query log's file: batched inserts from the queue, pages newest first, retention.
@Suite struct QueryLogStoreTests {
    static func entry(_ host: String, time: Double, status: Int = 200, account: String = "shop", retention: Double = 60)
        -> QueryLogEntry
    {
        var entry = QueryLogEntry(
            account: account, time: time, host: host, type: "A", format: "v1", client: "", source: "cache",
            status: status, rcode: "", durationMicroseconds: 7, requestID: "r1", expires: time + retention)
        entry.clientAddress = IPAddress("198.51.100.7")
        return entry
    }

    static func read(_ store: QueryLogStore, _ query: QueryLogQuery) async throws -> QueryLogPage {
        try await withCheckedThrowingContinuation { continuation in
            store.read(query) { continuation.resume(with: $0) }
        }
    }

    static func flush(_ store: QueryLogStore) async {
        await withCheckedContinuation { continuation in store.flush { continuation.resume() } }
    }

    @Test func pagesAreNewestFirstAndFollowTheirCursor() async throws {
        try await TemporaryDatabase.with { database in
            let clock = ManualClock(start: 1_000)
            let queue = QueryLogQueue()
            let store = try QueryLogStore(path: database.path + ".querylog", entries: queue, flushInterval: 3600, clock: clock)
            defer { store.close() }
            for index in 0..<5 { queue.offer(Self.entry("h\(index).test", time: 1_000 + Double(index))) }
            queue.offer(Self.entry("other.test", time: 1_000, account: "other"))
            await Self.flush(store)
            #expect(queue.written == 6)
            let first = try await Self.read(store, QueryLogQuery(account: "shop", limit: 2))
            #expect(first.entries.map(\.entry.host) == ["h4.test", "h3.test"])
            let second = try await Self.read(store, QueryLogQuery(account: "shop", limit: 2, before: first.next))
            #expect(second.entries.map(\.entry.host) == ["h2.test", "h1.test"])
            let last = try await Self.read(store, QueryLogQuery(account: "shop", limit: 2, before: second.next))
            #expect(last.entries.map(\.entry.host) == ["h0.test"])
            #expect(last.next == nil)
            #expect(last.entries[0].entry == Self.entry("h0.test", time: 1_000).completed())
            #expect(last.entries[0].entry.client == "198.51.100.0/24")
        }
    }

    @Test func everyAccountsPageNamesEachEntrysAccount() async throws {
        try await TemporaryDatabase.with { database in
            let queue = QueryLogQueue()
            let store = try QueryLogStore(
                path: database.path + ".querylog", entries: queue, flushInterval: 3600, clock: ManualClock(start: 1_000))
            defer { store.close() }
            queue.offer(Self.entry("a.test", time: 990, account: "shop"))
            queue.offer(Self.entry("b.test", time: 991, account: "other"))
            queue.offer(Self.entry("c.test", time: 992, account: "shop"))
            await Self.flush(store)
            let first = try await Self.read(store, QueryLogQuery(account: nil, limit: 2))
            #expect(first.entries.map { "\($0.entry.account) \($0.entry.host)" } == ["shop c.test", "other b.test"])
            let rest = try await Self.read(store, QueryLogQuery(account: nil, limit: 2, before: first.next))
            #expect(rest.entries.map { "\($0.entry.account) \($0.entry.host)" } == ["shop a.test"] && rest.next == nil)
            let one = try await Self.read(store, QueryLogQuery(account: "other", limit: 10))
            #expect(one.entries.map(\.entry.host) == ["b.test"])
        }
    }

    @Test func filtersSelectByTimeHostAndStatus() async throws {
        try await TemporaryDatabase.with { database in
            let queue = QueryLogQueue()
            let store = try QueryLogStore(
                path: database.path + ".querylog", entries: queue, flushInterval: 3600, clock: ManualClock(start: 1_000))
            defer { store.close() }
            queue.offer(Self.entry("a.test", time: 990))
            queue.offer(Self.entry("b.test", time: 995, status: 403))
            queue.offer(Self.entry("a.test", time: 999))
            await Self.flush(store)
            let since = try await Self.read(store, QueryLogQuery(account: "shop", since: 995, limit: 10))
            #expect(since.entries.map(\.entry.host) == ["a.test", "b.test"])
            let host = try await Self.read(store, QueryLogQuery(account: "shop", host: "a.test", limit: 10))
            #expect(host.entries.map(\.entry.time) == [999, 990])
            let status = try await Self.read(store, QueryLogQuery(account: "shop", status: 403, limit: 10))
            #expect(status.entries.map(\.entry.host) == ["b.test"])
        }
    }

    @Test func entriesAreDeletedWhenTheirRetentionEnds() async throws {
        try await TemporaryDatabase.with { database in
            let clock = ManualClock(start: 1_000)
            let queue = QueryLogQueue()
            let store = try QueryLogStore(path: database.path + ".querylog", entries: queue, flushInterval: 3600, clock: clock)
            defer { store.close() }
            queue.offer(Self.entry("short.test", time: 1_000, retention: 10))
            queue.offer(Self.entry("long.test", time: 1_000, retention: 100))
            await Self.flush(store)
            #expect(try await Self.read(store, QueryLogQuery(account: "shop", limit: 10)).entries.count == 2)
            clock.advance(by: 10)
            await Self.flush(store)
            #expect(store.expiredDeleted == 1)
            let left = try await Self.read(store, QueryLogQuery(account: "shop", limit: 10))
            #expect(left.entries.map(\.entry.host) == ["long.test"])
        }
    }

    @Test func theWriterMasksTheClientBeforeWriting() async throws {
        try await TemporaryDatabase.with { database in
            let queue = QueryLogQueue()
            let store = try QueryLogStore(
                path: database.path + ".querylog", entries: queue, flushInterval: 3600, clock: ManualClock(start: 1_000))
            defer { store.close() }
            var entry = Self.entry("a.test", time: 1_000)
            entry.clientAddress = IPAddress("2001:db8:1234:5678::1")
            entry.clientPrefixV6 = 48
            queue.offer(entry)
            await Self.flush(store)
            let page = try await Self.read(store, QueryLogQuery(account: "shop", limit: 10))
            #expect(page.entries.map(\.entry.client) == ["2001:db8:1234::/48"])
            #expect(page.entries.map(\.entry.clientAddress) == [nil])
        }
    }

    @Test func entriesSurviveReopeningTheFile() async throws {
        try await TemporaryDatabase.with { database in
            let path = database.path + ".querylog"
            let queue = QueryLogQueue()
            let clock = ManualClock(start: 1_000)
            let store = try QueryLogStore(path: path, entries: queue, flushInterval: 3600, clock: clock)
            queue.offer(Self.entry("kept.test", time: 1_000))
            store.close()
            let reopened = try QueryLogStore(path: path, entries: QueryLogQueue(), flushInterval: 3600, clock: clock)
            defer { reopened.close() }
            let page = try await Self.read(reopened, QueryLogQuery(account: "shop", limit: 10))
            #expect(page.entries.map(\.entry.host) == ["kept.test"])
        }
    }
}
