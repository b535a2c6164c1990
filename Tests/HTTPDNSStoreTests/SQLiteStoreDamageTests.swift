import Foundation
import HTTPDNSCore
import HTTPDNSStore
import Testing

/// A cache table damaged on disk (its root page overwritten, as a torn write or a bad sector
/// would) is set aside and rebuilt: the accounts are kept, the cache starts cold, writes succeed.
@Suite struct SQLiteStoreDamageTests {
    /// A closed database with one account and some cache rows, then the cache table's root page
    /// overwritten with garbage.
    private func damagedDatabase(_ database: TemporaryDatabase) async throws {
        let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
        try await store.saveAccount(id: "kept", json: #"{"id":"kept"}"#)
        for index in 0..<20 {
            store.upsert(account: "acct", key: Sample.key("old-\(index).example"), entry: Sample.entry(["192.0.2.1"]))
        }
        #expect(await store.flushed() == .durable)
        store.close()
        let reader = try IndependentConnection(path: database.path)
        let root = try reader.integer("SELECT rootpage FROM sqlite_master WHERE name = 'cache_entries'")
        let pageSize = try reader.integer("PRAGMA page_size")
        #expect(root > 1)
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: database.path))
        try file.seek(toOffset: UInt64((root - 1) * pageSize))
        try file.write(contentsOf: Data(repeating: 0xA5, count: pageSize))
        try file.close()
    }

    private func setAside(_ database: TemporaryDatabase) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: database.directory.path)
            .filter { $0.hasPrefix("store.sqlite.corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
    }

    @Test func aWriteIntoADamagedCacheTableRebuildsTheFileKeepingTheAccounts() async throws {
        try await TemporaryDatabase.with { database in
            try await damagedDatabase(database)
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            store.upsert(account: "acct", key: Sample.key("new.example"), entry: Sample.entry(["192.0.2.2"]))
            #expect(await store.flushed() == .durable)
            #expect(store.health.healthy)
            #expect(try store.loadAccounts() == ["kept": #"{"id":"kept"}"#])
            #expect(try setAside(database).count == 1)
            let reader = try IndependentConnection(path: database.path)
            #expect(try reader.rows("SELECT host FROM cache_entries") == [["new.example"]])
            #expect(try reader.rows("PRAGMA integrity_check") == [["ok"]])
        }
    }

    @Test func aWarmLoadFromADamagedCacheTableStartsColdAndKeepsTheAccounts() async throws {
        try await TemporaryDatabase.with { database in
            try await damagedDatabase(database)
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            let loaded = try store.loadCache(account: "acct", now: 1_000_100, discardExpiredOlderThan: 86_400, keepExpired: true)
            #expect(loaded.isEmpty)
            #expect(try store.loadAccounts() == ["kept": #"{"id":"kept"}"#])
            #expect(try setAside(database).count == 1)
            store.upsert(account: "acct", key: Sample.key("new.example"), entry: Sample.entry(["192.0.2.2"]))
            #expect(await store.flushed() == .durable)
        }
    }
}
