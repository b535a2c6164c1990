import HTTPDNSStore
import Testing

@Suite struct SQLiteStoreAccountTests {
    @Test func savedAccountsAndDeletionMarkersLoadBackAfterReopen() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path)
            try await store.saveAccount(id: "a", json: #"{"id":"a"}"#)
            try await store.saveAccount(id: "b", json: #"{"id":"b"}"#)
            try await store.deleteAccount(id: "b")
            try await store.deleteAccount(id: "file-declared")
            let expected: [String: String?] = ["a": #"{"id":"a"}"#, "b": String?.none, "file-declared": String?.none]
            #expect(try store.loadAccounts() == expected)
            store.close()

            let reopened = try SQLiteStore(path: database.path)
            defer { reopened.close() }
            #expect(try reopened.loadAccounts() == expected)
        }
    }

    @Test func savingAgainReplacesTheJSONAndRevivesADeletedAccount() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path)
            defer { store.close() }
            try await store.saveAccount(id: "a", json: #"{"v":1}"#)
            try await store.saveAccount(id: "a", json: #"{"v":2}"#)
            try await store.deleteAccount(id: "b")
            try await store.saveAccount(id: "b", json: #"{"v":3}"#)
            #expect(try store.loadAccounts() == ["a": #"{"v":2}"#, "b": #"{"v":3}"#])
        }
    }

    @Test func accountWritesAreCommittedWhenTheCallReturns() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            let reader = try IndependentConnection(path: database.path)
            try await store.saveAccount(id: "a", json: #"{"id":"a"}"#)
            // No flush, no close: the row is already committed for another connection.
            #expect(try reader.rows("SELECT id, json, deleted FROM accounts") == [["a", #"{"id":"a"}"#, "0"]])
            try await store.deleteAccount(id: "a")
            #expect(try reader.rows("SELECT id, json, deleted FROM accounts") == [["a", nil, "1"]])
            #expect(store.writesCommitted == 2)
        }
    }

    /// An account write is on disk when it completes, not only in the page cache: its commit
    /// syncs the WAL (`synchronous=FULL`). A write-behind cache commit on the same connection
    /// syncs nothing (`NORMAL`), which shows that the count tells the two apart.
    @Test func accountWritesSyncTheWALAndCacheCommitsDoNot() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: SyncCountingVFS.uri(database.path), flushInterval: 3_600)
            defer { store.close() }
            let wal = "/\(database.directory.lastPathComponent)/store.sqlite-wal"
            // The first write creates the WAL (its header is synced under either setting).
            try await store.saveAccount(id: "first", json: "{}")
            #expect(SyncCountingVFS.opens(endingWith: wal) == 1)

            var before = SyncCountingVFS.syncs(endingWith: wal)
            try await store.saveAccount(id: "a", json: #"{"id":"a"}"#)
            #expect(SyncCountingVFS.syncs(endingWith: wal) > before, "saving an account synced nothing")
            before = SyncCountingVFS.syncs(endingWith: wal)
            try await store.deleteAccount(id: "a")
            #expect(SyncCountingVFS.syncs(endingWith: wal) > before, "deleting an account synced nothing")

            before = SyncCountingVFS.syncs(endingWith: wal)
            store.upsert(account: "default", key: Sample.key("a.example"), entry: Sample.entry(["192.0.2.1"]))
            #expect(await store.flushed() == .durable)
            #expect(store.flushes == 1)
            #expect(SyncCountingVFS.syncs(endingWith: wal) == before)
        }
    }
}
