/// A failure of the SQLite store: what went wrong (`code`), a message for people (it names the
/// database path where that helps) and the SQLite result code behind it (`SQLITE_OK` when the
/// failure did not come from SQLite).
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. Extensible: new codes may be added, so do not switch exhaustively.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// `sqlite3_open_v2` failed (missing directory, no permission, ...).
        public static let openFailed = Code("openFailed")
        /// The file exists but is not an SQLite database (`SQLITE_NOTADB`).
        public static let notADatabase = Code("notADatabase")
        /// A migration failed.
        public static let schema = Code("schema")
        /// The file was written by a newer build (its schema version is above this build's).
        public static let newerSchema = Code("newerSchema")
        /// A statement could not be prepared.
        public static let prepare = Code("prepare")
        /// Writing (or committing) failed.
        public static let write = Code("write")
        /// Reading failed.
        public static let read = Code("read")
        /// The database file is damaged (`SQLITE_CORRUPT`).
        public static let corrupt = Code("corrupt")
        /// The disk (or the database's size limit) is full (`SQLITE_FULL`).
        public static let full = Code("full")
        /// The store was closed.
        public static let closed = Code("closed")

        public var description: String { name }
    }

    public var code: Code
    public var message: String
    /// The SQLite (primary) result code, e.g. 26 for `SQLITE_NOTADB`; 0 when not from SQLite.
    public var sqliteResultCode: Int32

    public init(code: Code, message: String, sqliteResultCode: Int32 = 0) {
        self.code = code
        self.message = message
        self.sqliteResultCode = sqliteResultCode
    }

    public var description: String {
        sqliteResultCode == 0
            ? "StoreError.\(code): \(message)"
            : "StoreError.\(code): \(message) (SQLite result code \(sqliteResultCode))"
    }

    /// The same error with `context` (e.g. the database path) put in front of the message.
    func prefixed(_ context: String) -> StoreError {
        StoreError(code: code, message: "\(context): \(message)", sqliteResultCode: sqliteResultCode)
    }
}
