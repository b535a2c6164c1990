import CSQLite

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
            sqlite3_close_v2(db)
            throw SQLiteConnection.error(result, message: "cannot open database '\(path)': \(message)", otherwise: .openFailed)
        }
        handle = db
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
        if result != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(errorMessage)
            throw SQLiteConnection.error(result, message: "\(message) (in: \(SQLiteConnection.oneLine(sql)))", otherwise: code)
        }
    }

    /// Compiles `sql` (`sqlite3_prepare_v3`); `persistent` for statements kept for the
    /// connection's lifetime.
    func prepare(_ sql: String, persistent: Bool = true) throws(StoreError) -> SQLiteStatement {
        guard let handle else { throw StoreError(code: .closed, message: "database '\(path)' is closed") }
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let result = sqlite3_prepare_v3(handle, sql, -1, flags, &statement, nil)
        guard result == SQLITE_OK, let statement else {
            throw SQLiteConnection.error(result, message: "\(lastMessage) (preparing: \(SQLiteConnection.oneLine(sql)))", otherwise: .prepare)
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
    func setBusyTimeout(milliseconds: Int32) {
        guard let handle else { return }
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// Rows changed by the last statement (`sqlite3_changes`).
    var changes: Int {
        guard let handle else { return 0 }
        return Int(sqlite3_changes(handle))
    }

    /// Closes the connection (`sqlite3_close_v2`); finalize statements first. Idempotent.
    func close() {
        guard let handle else { return }
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// `sql` on one line, for messages and logs.
    static func oneLine(_ sql: String) -> String {
        sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// Maps an SQLite result code to a `StoreError`: the codes that say what the file is
    /// (`SQLITE_NOTADB`, `SQLITE_CANTOPEN`) get their own codes, the rest get `otherwise`.
    static func error(_ result: Int32, message: String, otherwise: StoreError.Code) -> StoreError {
        let primary = result & 0xff
        let code: StoreError.Code
        switch primary {
        case SQLITE_NOTADB: code = .notADatabase
        case SQLITE_CANTOPEN: code = .openFailed
        default: code = otherwise
        }
        return StoreError(code: code, message: message, sqliteResultCode: primary)
    }
}

@available(*, unavailable)
extension SQLiteConnection: Sendable {}
