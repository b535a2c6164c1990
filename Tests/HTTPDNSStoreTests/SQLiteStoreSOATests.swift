import HTTPDNSCore
import HTTPDNSStore
import Testing

/// The SOA a negative answer keeps (RFC 2308 §3) survives a warm restart, and a database from
/// before it was kept (schema version 1) still opens and loads.
@Suite struct SQLiteStoreSOATests {
    private func load(_ store: SQLiteStore, _ account: String = "acct") throws -> [CacheKey: CacheEntry] {
        let entries = try store.loadCache(account: account, now: 1_000_001, discardExpiredOlderThan: 0, keepExpired: false)
        return Dictionary(uniqueKeysWithValues: entries)
    }

    @Test func negativeEntriesKeepTheirSOAAcrossAWarmRestart() async throws {
        try await TemporaryDatabase.with { database in
            let expected: [CacheKey: CacheEntry] = [
                Sample.key("nope.example"): Sample.entry([], ttl: 30, nxdomain: true, soa: Sample.soa()),
                Sample.key("v4only.example", .aaaa): Sample.entry([], ttl: 30, soa: Sample.soa()),
                Sample.key("fallback.example"): Sample.entry([], ttl: 30, nxdomain: true, origin: .localdns),
                Sample.key("www.example"): Sample.entry(["192.0.2.1"]),
            ]
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            for (key, entry) in expected { store.upsert(account: "acct", key: key, entry: entry) }
            store.close()
            let reader = try IndependentConnection(path: database.path)
            #expect(
                try reader.rows("SELECT host, family, soa FROM cache_entries ORDER BY host, family") == [
                    ["fallback.example", "1", nil],
                    ["nope.example", "1", "example. ns.example. hostmaster.example. 7 3600 600 86400 45"],
                    ["v4only.example", "28", "example. ns.example. hostmaster.example. 7 3600 600 86400 45"],
                    ["www.example", "1", nil],
                ])

            let reopened = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { reopened.close() }
            let loaded = try load(reopened)
            #expect(loaded == expected)
            #expect(loaded[Sample.key("nope.example")]?.soa?.minimum == 45)
        }
    }

    /// A file written by a build that kept no SOA (schema version 1, the table as it shipped)
    /// is migrated in place: its rows load as they were, without an SOA, and new ones keep it.
    @Test func aVersion1DatabaseIsMigratedAndItsRowsStillLoad() async throws {
        try await TemporaryDatabase.with { database in
            let old = try IndependentConnection(path: database.path)
            try old.execute(
                """
                CREATE TABLE cache_entries(
                    account TEXT NOT NULL, host TEXT NOT NULL, family INTEGER NOT NULL, network TEXT NOT NULL,
                    addresses TEXT NOT NULL, origin_ttl INTEGER NOT NULL, stored_at REAL NOT NULL,
                    nxdomain INTEGER NOT NULL, origin TEXT NOT NULL,
                    PRIMARY KEY(account, host, family, network)
                ) WITHOUT ROWID;
                CREATE TABLE accounts(
                    id TEXT PRIMARY KEY NOT NULL, json TEXT NULL, deleted INTEGER NOT NULL DEFAULT 0, updated_at REAL NOT NULL
                );
                INSERT INTO cache_entries VALUES ('acct', 'nope.example', 1, '', '', 30, 1000000, 1, 'upstream');
                INSERT INTO cache_entries VALUES ('acct', 'www.example', 1, '', '192.0.2.1', 300, 1000000, 0, 'upstream');
                PRAGMA user_version = 1;
                """)
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            #expect(try old.integer("PRAGMA user_version") == 2)
            #expect(
                try load(store) == [
                    Sample.key("nope.example"): Sample.entry([], ttl: 30, nxdomain: true),
                    Sample.key("www.example"): Sample.entry(["192.0.2.1"]),
                ])
            let withSOA = Sample.entry([], ttl: 30, nxdomain: true, soa: Sample.soa())
            store.upsert(account: "acct", key: Sample.key("nope.example"), entry: withSOA)
            await store.flushed()
            #expect(try load(store)[Sample.key("nope.example")]?.soa == Sample.soa())
        }
    }

    /// A row whose SOA text does not read is not loaded without it: it is dropped like a row
    /// whose host no longer validates.
    @Test func aRowWithAnSOAThatDoesNotReadIsDropped() async throws {
        try await TemporaryDatabase.with { database in
            let store = try SQLiteStore(path: database.path, flushInterval: 3_600)
            defer { store.close() }
            let withSOA = Sample.entry([], ttl: 30, nxdomain: true, soa: Sample.soa())
            store.upsert(account: "acct", key: Sample.key("nope.example"), entry: withSOA)
            store.upsert(account: "acct", key: Sample.key("other.example"), entry: withSOA)
            await store.flushed()
            let writer = try IndependentConnection(path: database.path)
            try writer.execute("UPDATE cache_entries SET soa = 'example. ns.example. 7 3600' WHERE host = 'nope.example'")
            #expect(try load(store).keys.map(\.host.value) == ["other.example"])
            #expect(try writer.rows("SELECT host FROM cache_entries") == [["other.example"]])
        }
    }
}
