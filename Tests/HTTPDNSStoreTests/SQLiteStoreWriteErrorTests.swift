import HTTPDNSCore
@testable import HTTPDNSStore
import Testing

@Suite struct SQLiteStoreWriteErrorTests {
    @Test func aFailedCommitIsCountedKeptForTheNextFlushAndDroppedAfterThreeFailures() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            let other = try IndependentConnection(path: database.path)
            try other.execute("DROP TABLE cache_entries")

            store.upsert(account: "acct", key: Sample.key("a.example"), entry: Sample.entry(["192.0.2.1"]))
            await store.flushed()
            #expect(store.writeErrors == 1)
            #expect(store.pendingChanges == 1)  // put back for the next flush

            try other.execute(StoreSchema.migrations[0])
            await store.flushed()
            #expect(store.writeErrors == 1)
            #expect(store.pendingChanges == 0)
            #expect(try other.rows("SELECT host FROM cache_entries") == [["a.example"]])

            try other.execute("DROP TABLE cache_entries")
            store.upsert(account: "acct", key: Sample.key("b.example"), entry: Sample.entry(["192.0.2.2"]))
            for _ in 0..<3 { await store.flushed() }
            #expect(store.writeErrors == 4)
            #expect(store.droppedChanges == 1)
            #expect(store.pendingChanges == 0)
        }
    }
}
