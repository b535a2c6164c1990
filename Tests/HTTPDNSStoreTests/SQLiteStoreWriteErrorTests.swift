import Foundation
import HTTPDNSCore
import Testing

@testable import HTTPDNSStore

/// Write failures are real SQLite errors on the store's own connection: `PRAGMA max_page_count`
/// makes SQLite answer `SQLITE_FULL` as on a full disk, `PRAGMA query_only` makes every write fail.
@Suite struct SQLiteStoreWriteErrorTests {
    private func fill(_ store: SQLiteStore, from first: Int, count: Int) {
        for index in first..<(first + count) {
            store.upsert(
                account: "acct", key: Sample.key("host-\(index).example"),
                entry: Sample.entry(["192.0.2.\(index % 250 + 1)", "198.51.100.\(index % 250 + 1)"]))
        }
    }

    @Test func aFullDatabaseFailsTheFlushKeepsEveryChangeAndRecoversWhenSpaceReturns() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            let reader = try IndependentConnection(path: database.path)
            let pages = try reader.integer("PRAGMA page_count")
            try store.executeOnWriter("PRAGMA max_page_count = \(pages)")

            fill(store, from: 0, count: 2_000)
            let failed = await store.flushed()
            guard case .failed(let reason) = failed else {
                Issue.record("a flush into a full database said \(failed)")
                return
            }
            #expect(reason.contains("full"))
            #expect(store.health.healthy == false)
            #expect(store.health.lastError?.contains("SQLite result code 13") == true)
            #expect(store.health.failingSince != nil)
            #expect(store.pendingChanges == 2_000)  // nothing dropped
            #expect(store.writeErrors == 1)
            #expect(try reader.integer("SELECT count(*) FROM cache_entries") == 0)

            fill(store, from: 2_000, count: 10)
            try store.executeOnWriter("PRAGMA max_page_count = 1073741823")
            #expect(await store.flushed() == .durable)
            #expect(store.health == PersistenceHealth(healthy: true))
            #expect(store.droppedChanges == 0)
            #expect(try reader.integer("SELECT count(*) FROM cache_entries") == 2_010)
        }
    }

    @Test func aFailedAccountWriteCompletesWithTheErrorAndMarksTheStoreUnhealthyUntilAWriteSucceeds() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            try store.executeOnWriter("PRAGMA query_only = 1")
            let error = await #expect(throws: AccountWriteFailure.self) { try await store.saveAccount(id: "a", json: #"{"id":"a"}"#) }
            #expect(
                error?.reason.hasPrefix("write") == true || error?.reason.contains("SQLite result code") == true,
                "\(String(describing: error))")
            #expect(error?.retryAfterSeconds == 1)  // the first failure's backoff
            #expect(store.health.healthy == false)
            #expect(try store.loadAccounts().isEmpty)

            try store.executeOnWriter("PRAGMA query_only = 0")
            store.upsert(account: "acct", key: Sample.key("a.example"), entry: Sample.entry(["192.0.2.1"]))
            #expect(await store.flushed() == .durable)
            #expect(store.health.healthy)
        }
    }

    @Test func anAccountWriteIntoAFullDatabaseFailsWithTheReasonAndARetryAfterThatGrowsWithTheBackoff() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            let reader = try IndependentConnection(path: database.path)
            try store.executeOnWriter("PRAGMA max_page_count = \(try reader.integer("PRAGMA page_count"))")
            let big = "{\"pad\":\"" + String(repeating: "x", count: 64_000) + "\"}"
            var retryAfters: [Int] = []
            for attempt in 0..<3 {
                let error = await #expect(throws: AccountWriteFailure.self) { try await store.saveAccount(id: "a\(attempt)", json: big) }
                #expect(error?.reason == "full (SQLite result code 13)")
                retryAfters.append(error?.retryAfterSeconds ?? 0)
            }
            #expect(retryAfters == [1, 2, 4])
            #expect(try store.loadAccounts().isEmpty)
        }
    }

    @Test func changesQueuedWhileFailingAreCommittedWithTheFirstFlushThatSucceeds() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            try store.executeOnWriter("PRAGMA query_only = 1")
            store.upsert(account: "acct", key: Sample.key("a.example"), entry: Sample.entry(["192.0.2.1"]))
            for _ in 0..<5 { #expect(await store.flushed() != .durable) }
            store.upsert(account: "acct", key: Sample.key("a.example"), entry: Sample.entry(["192.0.2.9"]))
            store.remove(account: "acct", key: Sample.key("gone.example"))
            #expect(store.writeErrors == 5)
            #expect(store.droppedChanges == 0)

            try store.executeOnWriter("PRAGMA query_only = 0")
            #expect(await store.flushed() == .durable)
            let reader = try IndependentConnection(path: database.path)
            #expect(try reader.rows("SELECT host, addresses FROM cache_entries") == [["a.example", "192.0.2.9"]])
        }
    }
}

/// The bounded write-behind queue on a store whose writes fail.
@Suite struct SQLiteStoreQueueBoundTests {
    @Test func aFailingStoreQueuesAtMostTheBoundAndNoFlushIsDurableUntilTheAccountIsFlushed() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600, maxPendingChanges: 100)
            defer { store.close() }
            try store.executeOnWriter("PRAGMA query_only = 1")
            for index in 0..<150 {
                store.upsert(account: "acct", key: Sample.key("h\(index).example"), entry: Sample.entry(["192.0.2.1"]))
            }
            #expect(store.pendingChanges == 100)
            #expect(store.droppedWrites == 50)
            #expect(store.incompleteAccounts == ["acct"])
            #expect(await store.flushed() != .durable)
            #expect(store.pendingChanges == 100)  // the failed batch is back, nothing more lost

            // Space is back: what was queued is committed, but answers cached while changes were
            // dropped may not be on disk, so the flush still is not durable.
            try store.executeOnWriter("PRAGMA query_only = 0")
            let afterRecovery = await store.flushed()
            guard case .failed(let reason) = afterRecovery else {
                Issue.record("a flush after dropped changes said \(afterRecovery)")
                return
            }
            #expect(reason.hasPrefix("queueFull"))
            #expect(reason.contains("'acct'"))
            #expect(store.health.healthy)
            let reader = try IndependentConnection(path: database.path)
            #expect(try reader.integer("SELECT count(*) FROM cache_entries") == 100)

            // Flushing the account's cache makes memory and disk agree again.
            store.removeAll(account: "acct")
            store.upsert(account: "acct", key: Sample.key("new.example"), entry: Sample.entry(["192.0.2.2"]))
            #expect(await store.flushed() == .durable)
            #expect(store.incompleteAccounts.isEmpty)
            #expect(try reader.rows("SELECT host FROM cache_entries") == [["new.example"]])
        }
    }
}
