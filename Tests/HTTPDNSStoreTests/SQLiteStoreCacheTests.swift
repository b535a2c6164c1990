import Foundation
import HTTPDNSCore
import HTTPDNSStore
import Testing

@Suite struct SQLiteStoreCacheTests {
    /// Loads everything of `account` that is not expired at `now`, as a dictionary.
    private func load(_ store: SQLiteStore, _ account: String, now: Double = 1_000_001) throws -> [CacheKey: CacheEntry] {
        let entries = try store.loadCache(account: account, now: now, discardExpiredOlderThan: 0, keepExpired: false)
        return Dictionary(uniqueKeysWithValues: entries)
    }

    /// Polls `condition` until it holds or 10 s pass (waiting, not timing).
    private func eventually(_ condition: () throws -> Bool) async throws -> Bool {
        for _ in 0..<1_000 {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try condition()
    }

    @Test func entriesSurviveCloseAndReopen() async throws {
        try await TemporaryDatabase.with { database in
            let expected: [CacheKey: CacheEntry] = [
                Sample.key("example.com"): Sample.entry(["192.0.2.1", "192.0.2.2"]),
                Sample.key("example.com", .aaaa): Sample.entry(["2001:db8::1", "2001:db8::2"], ttl: 60, storedAt: 1_000_000.25),
                Sample.key("missing.example", .a): Sample.entry([], ttl: 30, nxdomain: true, origin: .localdns),
                Sample.key("per-net.example", .a, network: "198.51.100.0/24"): Sample.entry(["203.0.113.9"]),
            ]
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            for (key, entry) in expected { store.upsert(account: "acct", key: key, entry: entry) }
            store.close()

            let reopened = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { reopened.close() }
            #expect(try load(reopened, "acct") == expected)
            #expect(try load(reopened, "other").isEmpty)
        }
    }

    @Test func cacheChangesAreOnlyQueuedUntilFlushed() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            let reader = try IndependentConnection(path: database.path)
            store.upsert(account: "acct", key: Sample.key("a.example"), entry: Sample.entry(["192.0.2.1"]))
            #expect(store.pendingChanges == 1)
            #expect(try reader.integer("SELECT count(*) FROM cache_entries") == 0)

            await store.flushed()
            #expect(store.pendingChanges == 0)
            #expect(try reader.integer("SELECT count(*) FROM cache_entries") == 1)
            #expect(store.flushes == 1)
            #expect(store.writesCommitted == 1)
        }
    }

    @Test func manyUpsertsOfOneKeyBecomeOneRowWithTheLatestEntry() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            let key = Sample.key("busy.example")
            for index in 0..<1_000 {
                store.upsert(
                    account: "acct", key: key, entry: Sample.entry(["192.0.2.\(index % 250)"], storedAt: 1_000_000 + Double(index) / 1_000))
            }
            #expect(store.pendingChanges == 1)
            await store.flushed()
            #expect(store.writesCommitted == 1)
            let reader = try IndependentConnection(path: database.path)
            #expect(try reader.integer("SELECT count(*) FROM cache_entries") == 1)
            #expect(try load(store, "acct", now: 1_000_002) == [key: Sample.entry(["192.0.2.249"], storedAt: 1_000_000.999)])
        }
    }

    @Test func removeDeletesOneKeyAndRemoveAllOneAccount() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            let x = Sample.key("x.example"), y = Sample.key("y.example")
            for account in ["a", "b", "c"] {
                store.upsert(account: account, key: x, entry: Sample.entry(["192.0.2.1"]))
                store.upsert(account: account, key: y, entry: Sample.entry(["192.0.2.2"]))
            }
            await store.flushed()
            store.remove(account: "a", key: x)
            store.removeAll(account: "b")
            await store.flushed()

            #expect(try load(store, "a") == [y: Sample.entry(["192.0.2.2"])])
            #expect(try load(store, "b").isEmpty)
            #expect(try store.cachedAccounts() == ["a", "c"])
            #expect(try load(store, "c") == [x: Sample.entry(["192.0.2.1"]), y: Sample.entry(["192.0.2.2"])])
            let reader = try IndependentConnection(path: database.path)
            #expect(try reader.integer("SELECT count(*) FROM cache_entries WHERE account = 'b'") == 0)
            #expect(try reader.integer("SELECT count(*) FROM cache_entries") == 3)
        }
    }

    @Test func upsertQueuedAfterRemoveAllSurvivesIt() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            let x = Sample.key("x.example"), y = Sample.key("y.example")
            store.upsert(account: "a", key: x, entry: Sample.entry(["192.0.2.1"]))
            await store.flushed()
            store.removeAll(account: "a")
            store.upsert(account: "a", key: y, entry: Sample.entry(["192.0.2.2"]))
            await store.flushed()
            #expect(try load(store, "a") == [y: Sample.entry(["192.0.2.2"])])
        }
    }

    @Test func warmLoadKeepsFreshAndYoungExpiredOnlyWhenAskedAndDeletesTheRest() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            let now = 10_000.0
            let fresh = Sample.entry(["192.0.2.1"], ttl: 300, storedAt: 9_900)  // expires 10_200
            let young = Sample.entry(["192.0.2.2"], ttl: 300, storedAt: 9_000)  // expired 700 s ago
            let old = Sample.entry(["192.0.2.3"], ttl: 300, storedAt: 1_000)  // expired 8_700 s ago
            let edge = Sample.entry(["192.0.2.4"], ttl: 300, storedAt: 9_700)  // expires exactly now
            for account in ["keep", "drop"] {
                store.upsert(account: account, key: Sample.key("fresh.example"), entry: fresh)
                store.upsert(account: account, key: Sample.key("young.example"), entry: young)
                store.upsert(account: account, key: Sample.key("old.example"), entry: old)
                store.upsert(account: account, key: Sample.key("edge.example"), entry: edge)
            }
            await store.flushed()

            let kept = Dictionary(
                uniqueKeysWithValues: try store.loadCache(account: "keep", now: now, discardExpiredOlderThan: 3_600, keepExpired: true))
            #expect(
                kept == [
                    Sample.key("fresh.example"): fresh, Sample.key("young.example"): young, Sample.key("edge.example"): edge,
                ])
            let dropped = Dictionary(
                uniqueKeysWithValues: try store.loadCache(account: "drop", now: now, discardExpiredOlderThan: 3_600, keepExpired: false))
            #expect(dropped == [Sample.key("fresh.example"): fresh])

            let reader = try IndependentConnection(path: database.path)
            #expect(
                try reader.rows("SELECT host FROM cache_entries WHERE account = 'keep' ORDER BY host") == [
                    ["edge.example"], ["fresh.example"], ["young.example"],
                ])
            #expect(try reader.rows("SELECT host FROM cache_entries WHERE account = 'drop'") == [["fresh.example"]])
            #expect(store.discardedExpiredRows == 4)
        }
    }

    @Test func rowsWithAnInvalidHostAreSkippedCountedAndDeleted() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            store.upsert(account: "acct", key: Sample.key("good.example"), entry: Sample.entry(["192.0.2.1"]))
            await store.flushed()
            let writer = try IndependentConnection(path: database.path)
            try writer.execute(
                """
                INSERT INTO cache_entries VALUES ('acct', 'bad host!', 1, '', '192.0.2.9', 300, 1000000.0, 0, 'upstream', NULL);
                INSERT INTO cache_entries VALUES ('acct', 'odd-family.example', 5, '', '192.0.2.9', 300, 1000000.0, 0, 'upstream', NULL);
                """)

            #expect(try load(store, "acct") == [Sample.key("good.example"): Sample.entry(["192.0.2.1"])])
            #expect(store.skippedInvalidRows == 2)
            #expect(try writer.integer("SELECT count(*) FROM cache_entries") == 1)
        }
    }

    @Test func flushMakesDataVisibleToAnIndependentConnection() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            store.upsert(
                account: "acct", key: Sample.key("v.example", .aaaa, network: "2001:db8::/56"),
                entry: Sample.entry(["2001:db8::1", "2001:db8::2"], ttl: 120, storedAt: 1_234.5, origin: .localdns))
            await store.flushed()

            let reader = try IndependentConnection(path: database.path)
            let rows = try reader.rows(
                "SELECT account, host, family, network, addresses, origin_ttl, stored_at, nxdomain, origin FROM cache_entries")
            #expect(rows == [["acct", "v.example", "28", "2001:db8::/56", "2001:db8::1,2001:db8::2", "120", "1234.5", "0", "localdns"]])
        }
    }

    @Test func writerCommitsOnItsOwnEveryInterval() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 0.05)
            defer { store.close() }
            let reader = try IndependentConnection(path: database.path)
            store.upsert(account: "acct", key: Sample.key("tick.example"), entry: Sample.entry(["192.0.2.1"]))
            #expect(try await eventually { try reader.integer("SELECT count(*) FROM cache_entries") == 1 })
            #expect(store.flushes >= 1)
        }
    }

    @Test func writerCommitsEarlyWhenTheBatchReachesTheThreshold() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600, earlyFlushThreshold: 10)
            defer { store.close() }
            let reader = try IndependentConnection(path: database.path)
            for index in 0..<9 {
                store.upsert(account: "acct", key: Sample.key("h\(index).example"), entry: Sample.entry(["192.0.2.1"]))
            }
            try await Task.sleep(for: .milliseconds(100))
            #expect(try reader.integer("SELECT count(*) FROM cache_entries") == 0)
            store.upsert(account: "acct", key: Sample.key("h9.example"), entry: Sample.entry(["192.0.2.1"]))
            #expect(try await eventually { try reader.integer("SELECT count(*) FROM cache_entries") == 10 })
        }
    }

    @Test func closeFlushesIsIdempotentAndLaterChangesAreDropped() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            store.upsert(account: "acct", key: Sample.key("a.example"), entry: Sample.entry(["192.0.2.1"]))
            store.close()
            store.close()
            store.upsert(account: "acct", key: Sample.key("b.example"), entry: Sample.entry(["192.0.2.2"]))
            #expect(store.pendingChanges == 0)
            await store.flushed()  // completion still runs once closed
            await #expect(throws: AccountWriteFailure.self) { try await store.saveAccount(id: "x", json: "{}") }

            let reader = try IndependentConnection(path: database.path)
            #expect(try reader.rows("SELECT host FROM cache_entries") == [["a.example"]])
        }
    }
}
