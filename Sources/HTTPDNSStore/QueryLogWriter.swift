import HTTPDNSCore

/// The query log's connection and prepared statements (`QueryLogStore`), confined to its queue
/// (not `Sendable`). The table `query_log` lives in a database file of its own, apart from the
/// cache and the accounts; every SQLite result goes through `SQLiteConnection.check`.
final class QueryLogWriter {
    let connection: SQLiteConnection
    private let beginImmediate: SQLiteStatement
    private let commit: SQLiteStatement
    private let insert: SQLiteStatement
    private let deleteExpired: SQLiteStatement
    /// A page of one account's entries, along its (account, id) index.
    private let select: SQLiteStatement
    /// A page of every account's entries, along the row ids.
    private let selectAll: SQLiteStatement

    static let schema = """
        CREATE TABLE IF NOT EXISTS query_log(
            id INTEGER PRIMARY KEY,
            account TEXT NOT NULL,
            time REAL NOT NULL,
            host TEXT NOT NULL,
            type TEXT NOT NULL,
            format TEXT NOT NULL,
            client TEXT NOT NULL,
            source TEXT NOT NULL,
            status INTEGER NOT NULL,
            rcode TEXT NOT NULL,
            duration_us INTEGER NOT NULL,
            request_id TEXT NOT NULL,
            expires REAL NOT NULL
        );
        CREATE INDEX IF NOT EXISTS query_log_account ON query_log(account, id);
        CREATE INDEX IF NOT EXISTS query_log_expires ON query_log(expires);
        """

    /// Opens `path` (WAL, `synchronous=NORMAL`), creates the table and prepares the statements.
    init(path: String) throws(StoreError) {
        do {
            connection = try SQLiteConnection.openForWriting(path: path)
            try connection.execute(Self.schema, failure: .schema)
            beginImmediate = try connection.prepare("BEGIN IMMEDIATE")
            commit = try connection.prepare("COMMIT")
            insert = try connection.prepare(
                """
                INSERT INTO query_log
                (account, time, host, type, format, client, source, status, rcode, duration_us, request_id, expires)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                """)
            deleteExpired = try connection.prepare("DELETE FROM query_log WHERE expires <= ?1")
            // Newest first along the (account, id) index, or the row ids for every account: a
            // page reads `limit` rows (and those the filters skip), whatever the table's size.
            select = try connection.prepare(Self.page(where: "account = ?1 AND"))
            selectAll = try connection.prepare(Self.page(where: ""))
        } catch {
            throw error.message.contains(path) ? error : error.prefixed("query log database '\(path)'")
        }
    }

    deinit { close() }

    /// Inserts `entries` in one transaction; rolls back when one fails.
    func insert(_ entries: [QueryLogEntry]) throws(StoreError) {
        try beginImmediate.run()
        do {
            for entry in entries {
                try insert.bind(entry.account, at: 1)
                try insert.bind(entry.time, at: 2)
                try insert.bind(entry.host, at: 3)
                try insert.bind(entry.type, at: 4)
                try insert.bind(entry.format, at: 5)
                try insert.bind(entry.client, at: 6)
                try insert.bind(entry.source, at: 7)
                try insert.bind(Int64(entry.status), at: 8)
                try insert.bind(entry.rcode, at: 9)
                try insert.bind(Int64(entry.durationMicroseconds), at: 10)
                try insert.bind(entry.requestID, at: 11)
                try insert.bind(entry.expires, at: 12)
                try insert.run()
            }
            try commit.run()
        } catch {
            if !connection.isAutocommit { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// Deletes the entries whose retention ended by `now`; returns how many.
    func deleteExpired(now: Double) throws(StoreError) -> Int {
        try deleteExpired.bind(now, at: 1)
        try deleteExpired.run()
        return connection.changes
    }

    /// The query of one page, `account` the condition that picks one account's rows (or none).
    private static func page(where account: String) -> String {
        """
        SELECT id, time, host, type, format, client, source, status, rcode, duration_us, request_id, expires, account
        FROM query_log
        WHERE \(account) id < ?2 AND time >= ?3 AND expires > ?4
        AND (?5 IS NULL OR host = ?5) AND (?6 IS NULL OR status = ?6)
        ORDER BY id DESC LIMIT ?7
        """
    }

    /// One page of `query` at `now` (expired entries not yet deleted are not shown).
    func page(_ query: QueryLogQuery, now: Double) throws(StoreError) -> QueryLogPage {
        let select = query.account == nil ? selectAll : select
        if let account = query.account { try select.bind(account, at: 1) }
        try select.bind(query.before ?? Int64.max, at: 2)
        try select.bind(query.since, at: 3)
        try select.bind(now, at: 4)
        try select.bind(query.host, at: 5)
        if let status = query.status { try select.bind(Int64(status), at: 6) }
        // One more than asked: whether there is a next page.
        try select.bind(Int64(query.limit + 1), at: 7)
        var rows: [(id: Int64, entry: QueryLogEntry)] = []
        do {
            while try select.step(failure: .read) {
                let entry = QueryLogEntry(
                    account: select.text(at: 12), time: select.double(at: 1), host: select.text(at: 2), type: select.text(at: 3),
                    format: select.text(at: 4), client: select.text(at: 5), source: select.text(at: 6),
                    status: Int(select.int64(at: 7)), rcode: select.text(at: 8), durationMicroseconds: Int(select.int64(at: 9)),
                    requestID: select.text(at: 10), expires: select.double(at: 11))
                rows.append((select.int64(at: 0), entry))
            }
        } catch {
            select.resetAfterFailure()
            throw error
        }
        try select.reset()
        guard rows.count > query.limit else { return QueryLogPage(entries: rows, next: nil) }
        rows.removeLast()
        return QueryLogPage(entries: rows, next: rows.last?.id)
    }

    /// Finalizes the statements and closes the connection. Idempotent.
    func close() {
        for statement in [beginImmediate, commit, insert, deleteExpired, select, selectAll] { statement.finalize() }
        connection.close()
    }
}

@available(*, unavailable)
extension QueryLogWriter: Sendable {}
