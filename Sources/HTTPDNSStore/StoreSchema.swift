/// The database schema and its migrations. `PRAGMA user_version` holds the number of migrations
/// applied; each migration runs in its own transaction together with the version bump.
enum StoreSchema {
    /// Migration `i` takes the schema from version `i` to `i + 1`. Append only; never edit one
    /// that has shipped.
    static let migrations: [String] = [
        """
        CREATE TABLE IF NOT EXISTS cache_entries(
            account TEXT NOT NULL,
            host TEXT NOT NULL,
            family INTEGER NOT NULL,
            network TEXT NOT NULL,
            addresses TEXT NOT NULL,
            origin_ttl INTEGER NOT NULL,
            stored_at REAL NOT NULL,
            nxdomain INTEGER NOT NULL,
            origin TEXT NOT NULL,
            PRIMARY KEY(account, host, family, network)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS accounts(
            id TEXT PRIMARY KEY NOT NULL,
            json TEXT NULL,
            deleted INTEGER NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL
        );
        """,
        // The SOA of a negative answer's zone (`NegativeAnswerSOA`'s text form), NULL for positive
        // answers and for rows written before it was kept.
        "ALTER TABLE cache_entries ADD COLUMN soa TEXT NULL;",
    ]

    /// The version this build writes.
    static var currentVersion: Int64 { Int64(migrations.count) }

    /// Brings the database up to `currentVersion`; refuses a file from a newer build.
    static func migrate(_ connection: SQLiteConnection) throws(StoreError) {
        let version = try connection.userVersion()
        guard version <= currentVersion else {
            throw StoreError(
                code: .newerSchema,
                message: "schema version \(version) is newer than this build's \(currentVersion)")
        }
        for index in Int(version)..<migrations.count {
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try connection.execute(migrations[index], failure: .schema)
                try connection.execute("PRAGMA user_version = \(index + 1)", failure: .schema)
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }
}
