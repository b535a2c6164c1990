import CSQLite
import HTTPDNSCore
import Testing

@testable import HTTPDNSStore

/// What the warm load reads: the work of listing the accounts follows the number of accounts, not
/// of rows; the rows of an account are read once when none is to be deleted; the entries come in
/// batches, in the rows' order.
@Suite struct WarmLoadReadsTests {
    /// Rows of `account` named `h0.example`..., all stored at 1 000 000 with a TTL of 300.
    private func insert(_ count: Int, of account: String, into database: TemporaryDatabase) throws {
        let connection = try IndependentConnection(path: database.path)
        try connection.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < \(count))
            INSERT INTO cache_entries
            SELECT '\(account)', 'h' || i || '.example', 1, '', '192.0.2.1', 300, 1000000.0, 0, 'upstream', NULL FROM n;
            """)
    }

    /// Virtual-machine steps of the writer's statements whose SQL starts with `prefix` (all when
    /// empty) since the last call, which sets the counters back to 0.
    private func steps(of writer: StoreWriter, startingWith prefix: String = "") -> Int {
        var total = 0
        var statement = sqlite3_next_stmt(writer.connection.handle, nil)
        while let current = statement {
            let steps = Int(sqlite3_stmt_status(current, Int32(SQLITE_STMTSTATUS_VM_STEP), 1))
            if String(cString: sqlite3_sql(current)).hasPrefix(prefix) { total += steps }
            statement = sqlite3_next_stmt(writer.connection.handle, current)
        }
        return total
    }

    @Test func listingTheCachedAccountsSeeksEachInsteadOfReadingEveryRow() async throws {
        try await TemporaryDatabase.with { database in
            let writer = try StoreWriter(path: database.path)
            defer { writer.close() }
            try insert(20_000, of: "big", into: database)
            try insert(3, of: "a", into: database)
            try insert(3, of: "zed", into: database)
            _ = steps(of: writer)
            #expect(try writer.cachedAccounts() == ["a", "big", "zed"])
            // A statement that read every row would take at least one step per row.
            #expect(steps(of: writer) < 1_000)
        }
    }

    @Test func aLoadWithNothingExpiredReadsTheRowsOnceAndDeletesNothing() async throws {
        try await TemporaryDatabase.with { database in
            let writer = try StoreWriter(path: database.path)
            defer { writer.close() }
            try insert(2_000, of: "acct", into: database)
            _ = steps(of: writer)
            let result = try writer.loadCache(
                account: "acct", now: 1_000_100, window: 0, keepExpired: false, batchSize: 512, deliver: { _ in })
            #expect(result.loaded == 2_000)
            #expect(result.discardedExpired == 0)
            #expect(steps(of: writer, startingWith: "DELETE") == 0)
        }
    }

    @Test func aLoadThatMeetsAnExpiredRowStillDeletesEveryExpiredRow() async throws {
        try await TemporaryDatabase.with { database in
            let writer = try StoreWriter(path: database.path)
            defer { writer.close() }
            try insert(10, of: "acct", into: database)
            let connection = try IndependentConnection(path: database.path)
            try connection.execute("UPDATE cache_entries SET stored_at = 1000.0 WHERE host IN ('h3.example', 'h7.example')")
            let result = try writer.loadCache(
                account: "acct", now: 1_000_100, window: 0, keepExpired: false, batchSize: 512, deliver: { _ in })
            #expect(result.loaded == 8)
            #expect(result.discardedExpired == 2)
            #expect(try connection.integer("SELECT count(*) FROM cache_entries") == 8)
        }
    }

    @Test func entriesArriveInBatchesInTheRowsOrderAsTheArrayLoadReturnsThem() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            try insert(10, of: "acct", into: database)
            var batches: [[(CacheKey, CacheEntry)]] = []
            let outcome = try store.loadCache(
                account: "acct", now: 1_000_100, discardExpiredOlderThan: 0, keepExpired: false, batchSize: 4
            ) { batches.append($0) }
            #expect(outcome == WarmLoadOutcome(loaded: 10, setAside: false))
            #expect(batches.map(\.count) == [4, 4, 2])
            let whole = try store.loadCache(account: "acct", now: 1_000_100, discardExpiredOlderThan: 0, keepExpired: false)
            #expect(batches.flatMap { $0 }.map(\.0) == whole.map(\.0))
            #expect(batches.flatMap { $0 }.map(\.1) == whole.map(\.1))
        }
    }
}
