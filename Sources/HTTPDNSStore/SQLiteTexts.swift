/// The text arguments of one run of a statement, written one after another into one buffer
/// that the caller keeps and reuses: `SQLiteStatement.run(texts:)` binds them in place
/// (`SQLITE_STATIC`). Bound with a copy each (`SQLITE_TRANSIENT`), the texts of a stored answer
/// cost SQLite an allocation, a copy and a free apiece on the store's thread.
struct SQLiteTexts {
    /// Where one argument's bytes lie in `bytes`; `count` nil binds NULL.
    struct Span {
        var index: Int32
        var start: Int
        var count: Int?
    }

    private(set) var bytes: [UInt8] = []
    private(set) var spans: [Span] = []

    /// Forgets every argument, keeping the buffers' capacity.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
    }

    /// Parameter `index` is the UTF-8 of `text`, or NULL for nil.
    mutating func append(_ text: String?, at index: Int32) {
        guard var text else {
            spans.append(Span(index: index, start: bytes.count, count: nil))
            return
        }
        append(at: index) { bytes in text.withUTF8 { bytes.append(contentsOf: $0) } }
    }

    /// Parameter `index` is the UTF-8 text `write` appends to the buffer it is given.
    mutating func append(at index: Int32, writing write: (inout [UInt8]) -> Void) {
        let start = bytes.count
        write(&bytes)
        spans.append(Span(index: index, start: start, count: bytes.count - start))
    }
}
