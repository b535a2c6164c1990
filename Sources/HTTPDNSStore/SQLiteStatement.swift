import CSQLite

/// A prepared statement (`sqlite3_stmt *`) of a `SQLiteConnection`; same thread rules as its
/// connection. Parameter and column indexes follow SQLite: parameters from 1, columns from 0.
/// Every call that returns an SQLite result code goes through `SQLiteConnection.check`.
final class SQLiteStatement {
    private var handle: OpaquePointer?
    private let connection: OpaquePointer
    let sql: String

    init(handle: OpaquePointer, connection: OpaquePointer, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { finalize() }

    /// `sqlite3_bind_text` (copied by SQLite) of the string's own UTF-8 bytes with their length:
    /// passing a Swift string as `const char *` would first copy it into a new NUL-terminated
    /// array, an allocation per bound text on the store's thread.
    func bind(_ value: String, at index: Int32) throws(StoreError) {
        var value = value
        try check(value.withUTF8 { bindText($0, at: index) }, "binding parameter \(index)")
    }

    /// `sqlite3_bind_text` of `bytes`, unchecked. Empty text may have no storage: it is bound as
    /// "" rather than as a NULL pointer (which would be NULL).
    private func bindText(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32) -> Int32 {
        guard let start = bytes.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, chttpdns_sqlite_transient()) }
        let text = UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self)
        return sqlite3_bind_text(handle, index, text, Int32(bytes.count), chttpdns_sqlite_transient())
    }

    /// `sqlite3_bind_text`, or `sqlite3_bind_null` for nil.
    func bind(_ value: String?, at index: Int32) throws(StoreError) {
        if let value {
            try bind(value, at: index)
        } else {
            try check(sqlite3_bind_null(handle, index), "binding parameter \(index)")
        }
    }

    /// `sqlite3_bind_int64`.
    func bind(_ value: Int64, at index: Int32) throws(StoreError) {
        try check(sqlite3_bind_int64(handle, index, value), "binding parameter \(index)")
    }

    /// `sqlite3_bind_double`.
    func bind(_ value: Double, at index: Int32) throws(StoreError) {
        try check(sqlite3_bind_double(handle, index, value), "binding parameter \(index)")
    }

    /// `sqlite3_step`: true when a row is ready, false when done. Errors get `failure` as code
    /// (unless the result code says more, e.g. `notADatabase`, `corrupt`, `full`).
    func step(failure: StoreError.Code = .write) throws(StoreError) -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            try check(result, "in", failure: failure)
            return false  // not reached: `check` throws for every code but SQLITE_OK
        }
    }

    /// Binds `texts` where they lie (`SQLITE_STATIC`; the other parameters bound before), runs the
    /// statement (no rows), then resets it and clears its bindings: no pointer into `texts`
    /// outlives the call, whatever fails.
    func run(texts: SQLiteTexts) throws(StoreError) {
        try texts.bytes.withUnsafeBufferPointer { buffer throws(StoreError) in
            for span in texts.spans {
                let result: Int32
                if let count = span.count, count > 0, let base = buffer.baseAddress {
                    let text = UnsafeRawPointer(base + span.start).assumingMemoryBound(to: CChar.self)
                    result = sqlite3_bind_text(handle, span.index, text, Int32(count), nil)
                } else if span.count != nil {
                    result = bindText(UnsafeBufferPointer(start: nil, count: 0), at: span.index)
                } else {
                    result = sqlite3_bind_null(handle, span.index)
                }
                do throws(StoreError) {
                    try check(result, "binding parameter \(span.index)")
                } catch {
                    resetAfterFailure()
                    throw error
                }
            }
            try run()
        }
    }

    /// Runs a statement that returns no rows, then resets it.
    func run() throws(StoreError) {
        do {
            _ = try step()
        } catch {
            // After a failed step, `sqlite3_reset` returns that step's error again: it is the one
            // thrown here, so the reset's own result adds nothing.
            resetAfterFailure()
            throw error
        }
        try reset()
    }

    /// `sqlite3_reset` and `sqlite3_clear_bindings`, ready for the next use. Throws what the
    /// reset reports (the error of the statement's last step, when that step failed).
    /// The bindings are cleared even when the reset reports an error: a text bound in place
    /// must not stay bound past its buffer.
    func reset() throws(StoreError) {
        let reset = sqlite3_reset(handle)
        // `sqlite3_clear_bindings` always returns SQLITE_OK (documented); checked all the same.
        let cleared = sqlite3_clear_bindings(handle)
        try check(reset, "resetting")
        try check(cleared, "clearing the bindings of")
    }

    /// Resets a statement whose step has failed and whose error the caller already throws.
    func resetAfterFailure() {
        _ = sqlite3_reset(handle)  // repeats the step's error, already reported
        _ = sqlite3_clear_bindings(handle)  // always SQLITE_OK
    }

    /// `sqlite3_column_int64`.
    func int64(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// `sqlite3_column_double`.
    func double(at column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// `sqlite3_column_type` is `SQLITE_NULL`.
    func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// `sqlite3_column_text` as a String ("" for NULL).
    func text(at column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// `sqlite3_column_text`'s bytes, valid during `body` (empty for NULL): no String is made.
    func withText<R>(at column: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        guard let bytes = sqlite3_column_text(handle, column) else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
        return body(UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column))))
    }

    /// `sqlite3_finalize`. Idempotent. Its result repeats the last step's error (already
    /// reported by `step`), so it is not an error of its own.
    func finalize() {
        guard let handle else { return }
        _ = sqlite3_finalize(handle)
        self.handle = nil
    }

    /// `doing` is built only for an error: a bind's "binding parameter N" made on every call cost
    /// two String allocations per bind, about ten per stored answer on the store's thread.
    private func check(
        _ result: Int32, _ doing: @autoclosure () -> String, failure: StoreError.Code = .write
    ) throws(StoreError) {
        try SQLiteConnection.check(result, connection: connection, failure: failure) {
            "\(doing()) \(SQLiteConnection.oneLine(sql))"
        }
    }
}

@available(*, unavailable)
extension SQLiteStatement: Sendable {}
