import CSQLite
import HTTPDNSCore

/// One SQLite connection (`sqlite3 *`), opened with `SQLITE_OPEN_NOMUTEX`: it must be used by
/// one thread (or serial queue) at a time. Not `Sendable`.
final class SQLiteConnection {
    let path: String
    private(set) var handle: OpaquePointer?

    /// Opens (creates) the database at `path` (`sqlite3_open_v2`, read-write, create, no mutex).
    init(path: String) throws(StoreError) {
        self.path = path
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &db, flags, nil)
        guard result == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            // A failed open still returns a handle to release; the open's error is the one thrown.
            _ = sqlite3_close_v2(db)
            throw SQLiteConnection.error(result, message: "cannot open database '\(path)': \(message)", otherwise: .openFailed)
        }
        handle = db
    }

    /// Opens `path` as a writer's connection: a 5 s busy timeout, WAL with `synchronous=NORMAL`
    /// (a process crash loses no commit; a power loss may lose the last ones, never the file's
    /// consistency), the WAL truncated back to 64 MiB after a checkpoint (a huge batch can grow it).
    static func openForWriting(path: String) throws(StoreError) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path)
        try connection.setBusyTimeout(milliseconds: 5_000)
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute("PRAGMA synchronous=NORMAL")
        try connection.execute("PRAGMA journal_size_limit=67108864")
        return connection
    }

    deinit { close() }

    var isOpen: Bool { handle != nil }

    /// The connection's last error message (`sqlite3_errmsg`).
    var lastMessage: String {
        guard let handle else { return "connection closed" }
        return String(cString: sqlite3_errmsg(handle))
    }

    /// Runs one or more statements without results (`sqlite3_exec`).
    func execute(_ sql: String, failure code: StoreError.Code = .write) throws(StoreError) {
        guard let handle else { throw StoreError(code: .closed, message: "database '\(path)' is closed") }
        var errorMessage: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        // `sqlite3_exec`'s own message is the same text `sqlite3_errmsg` gives.
        sqlite3_free(errorMessage)
        try Self.check(result, connection: handle, failure: code) { "in: \(Self.oneLine(sql))" }
    }

    /// Compiles `sql` (`sqlite3_prepare_v3`); `persistent` for statements kept for the
    /// connection's lifetime.
    func prepare(_ sql: String, persistent: Bool = true) throws(StoreError) -> SQLiteStatement {
        guard let handle else { throw StoreError(code: .closed, message: "database '\(path)' is closed") }
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let result = sqlite3_prepare_v3(handle, sql, -1, flags, &statement, nil)
        try Self.check(result, connection: handle, failure: .prepare) { "preparing: \(Self.oneLine(sql))" }
        guard let statement else {
            throw StoreError(code: .prepare, message: "no statement in: \(Self.oneLine(sql))")
        }
        return SQLiteStatement(handle: statement, connection: handle, sql: sql)
    }

    /// `PRAGMA user_version`: the schema version.
    func userVersion() throws(StoreError) -> Int64 {
        let statement = try prepare("PRAGMA user_version", persistent: false)
        defer { statement.finalize() }
        guard try statement.step() else { return 0 }
        return statement.int64(at: 0)
    }

    /// Sets the busy timeout (`sqlite3_busy_timeout`).
    func setBusyTimeout(milliseconds: Int32) throws(StoreError) {
        guard let handle else { throw StoreError(code: .closed, message: "database '\(path)' is closed") }
        try Self.check(sqlite3_busy_timeout(handle, milliseconds), connection: handle, failure: .openFailed) { "setting the busy timeout" }
    }

    /// True outside a transaction (`sqlite3_get_autocommit`): SQLite rolls some failed
    /// transactions back by itself (e.g. after `SQLITE_FULL`).
    var isAutocommit: Bool {
        guard let handle else { return true }
        return sqlite3_get_autocommit(handle) != 0
    }

    /// Rows changed by the last statement (`sqlite3_changes`).
    var changes: Int {
        guard let handle else { return 0 }
        return Int(sqlite3_changes(handle))
    }

    /// Closes the connection (`sqlite3_close_v2`); finalize statements first. Idempotent.
    /// A failure (only API misuse can cause one) is logged: closing has no caller to tell.
    func close() {
        guard let handle else { return }
        do {
            try Self.check(sqlite3_close_v2(handle), connection: handle, failure: .closed) { "closing '\(path)'" }
        } catch {
            Log.error("store: \(error)")
        }
        self.handle = nil
    }

    /// `sql` on one line, for messages and logs.
    static func oneLine(_ sql: String) -> String {
        sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The one place an SQLite result code is checked: returns for `SQLITE_OK`, else throws a
    /// `StoreError` with the connection's message (`sqlite3_errmsg`, or `sqlite3_errstr` without
    /// a connection) and `context()` (what was being done). Codes that say what happened to the
    /// file get their own `StoreError.Code`; the rest get `failure`.
    static func check(
        _ result: Int32, connection: OpaquePointer?, failure: StoreError.Code, _ context: () -> String
    ) throws(StoreError) {
        guard result != SQLITE_OK else { return }
        let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result))
        throw error(result, message: "\(message) (\(context()))", otherwise: failure)
    }

    /// Maps an SQLite result code to a `StoreError`: the codes that say what the file is or what
    /// befell it (`SQLITE_NOTADB`, `SQLITE_CANTOPEN`, `SQLITE_CORRUPT`, `SQLITE_FULL`) get their
    /// own codes, the rest get `otherwise`.
    static func error(_ result: Int32, message: String, otherwise: StoreError.Code) -> StoreError {
        let primary = result & 0xff
        let code: StoreError.Code
        switch primary {
        case SQLITE_NOTADB: code = .notADatabase
        case SQLITE_CANTOPEN: code = .openFailed
        case SQLITE_CORRUPT: code = .corrupt
        case SQLITE_FULL: code = .full
        default: code = otherwise
        }
        return StoreError(code: code, message: message, sqliteResultCode: primary)
    }
}

@available(*, unavailable)
extension SQLiteConnection: Sendable {}
