/// The logic of the query log's queue: at most `capacity` records, `byteCapacity` bytes in all,
/// waiting for the writer, kept as bytes (`QueryLogRecord`); a record offered while it is full
/// is dropped and counted. No lock, no clock (`QueryLogQueue` is its locked shell).
struct QueryLogBuffer {
    let capacity: Int
    let byteCapacity: Int
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0
    private(set) var dropped = 0

    init(capacity: Int, byteCapacity: Int) {
        self.capacity = max(1, capacity)
        self.byteCapacity = byteCapacity
    }

    /// Queues the record, or drops and counts it when `capacity` records or `byteCapacity` bytes
    /// wait; true when queued.
    mutating func offer(_ record: QueryLogRecord, host: UnsafeRawBufferPointer, texts: QueryLogRecord.Texts) -> Bool {
        guard count < capacity, QueryLogRecord.append(record, host: host, texts: texts, to: &bytes, limit: byteCapacity) else {
            dropped += 1
            return false
        }
        count += 1
        return true
    }

    /// Every waiting record's bytes, oldest first; the buffer is left with `fresh`, an empty array
    /// whose capacity the caller reserved (outside the lock), so that offers do not grow it.
    mutating func drain(into fresh: inout [UInt8]) {
        swap(&bytes, &fresh)
        count = 0
    }
}
