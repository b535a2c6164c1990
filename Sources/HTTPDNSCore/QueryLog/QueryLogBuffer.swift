/// The logic of the query log's queue: at most `capacity` records, `byteCapacity` bytes in all,
/// waiting for the writer, written as bytes (`QueryLogRecord`) into one block of memory it
/// owns; a record offered while it is full is dropped and counted. No lock, no clock
/// (`QueryLogQueue` is its locked shell).
struct QueryLogBuffer: ~Copyable {
    let capacity: Int
    let byteCapacity: Int
    private var block: UnsafeMutableRawPointer
    private(set) var used = 0
    private(set) var count = 0
    private(set) var dropped = 0

    init(capacity: Int, byteCapacity: Int) {
        self.capacity = max(1, capacity)
        self.byteCapacity = max(1, byteCapacity)
        block = Self.allocate(byteCount: self.byteCapacity)
    }

    deinit { block.deallocate() }

    /// A block for a buffer of `byteCount` bytes.
    static func allocate(byteCount: Int) -> UnsafeMutableRawPointer {
        .allocate(byteCount: max(1, byteCount), alignment: 16)
    }

    /// Queues the record, or drops and counts it when `capacity` records or `byteCapacity` bytes
    /// wait; true when queued.
    mutating func offer(_ record: QueryLogRecord, host: UnsafeRawBufferPointer, texts: QueryLogRecord.Texts) -> Bool {
        guard count < capacity,
            let written = QueryLogRecord.write(record, host: host, texts: texts, to: block + used, available: byteCapacity - used)
        else {
            dropped += 1
            return false
        }
        used += written
        count += 1
        return true
    }

    /// Gives the waiting records' block to the caller through `fresh` (and their byte count),
    /// taking `fresh`, an empty block of `byteCapacity` bytes the caller allocated outside the lock.
    mutating func drain(into fresh: inout UnsafeMutableRawPointer) -> Int {
        swap(&block, &fresh)
        defer {
            used = 0
            count = 0
        }
        return used
    }
}

/// The block is owned by the buffer alone and reached only through `QueryLogQueue`'s lock.
extension QueryLogBuffer: @unchecked Sendable {}
