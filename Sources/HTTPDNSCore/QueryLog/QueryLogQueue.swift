import Synchronization

/// The bounded queue between the request threads, which log lookups (`offer`), and the query
/// log's writer, which drains it into the store off those threads. `offer` takes one short
/// lock and never waits for the writer: when the queue is full the entry is dropped and
/// counted (`dropped`). Also decides, cheaply, which lookups an account's `sampleRate` logs.
public final class QueryLogQueue: Sendable {
    private let locked_buffer: Mutex<QueryLogBuffer>
    private let writtenCounter = Atomic<Int>(0)
    /// Advanced once per sampling decision; its mixed value is the decision's random number.
    private let sampleSequence = Atomic<UInt64>(0)

    /// The bounds the service uses: 32 768 entries, 4 MiB (pages of the block are touched only
    /// as records fill it).
    public static let defaultCapacity = 32_768
    public static let defaultByteCapacity = 4 << 20

    public init(capacity: Int = QueryLogQueue.defaultCapacity, byteCapacity: Int = QueryLogQueue.defaultByteCapacity) {
        self.capacity = max(1, capacity)
        self.byteCapacity = byteCapacity
        locked_buffer = Mutex(QueryLogBuffer(capacity: capacity, byteCapacity: byteCapacity))
    }

    /// Queues a record with its name's bytes and texts for the writer; when the queue is full,
    /// drops and counts it. Never waits, and copies bytes only.
    @discardableResult
    public func offer(_ record: QueryLogRecord, host: UnsafeRawBufferPointer, texts: QueryLogRecord.Texts) -> Bool {
        locked_buffer.withLock { $0.offer(record, host: host, texts: texts) }
    }

    /// Queues `entry`: its client is `clientAddress` with its prefixes (its `client` text is not
    /// read), masked by the writer.
    @discardableResult
    public func offer(_ entry: QueryLogEntry) -> Bool {
        let record = QueryLogRecord(
            time: entry.time, expires: entry.expires, durationMicroseconds: entry.durationMicroseconds, status: entry.status,
            client: entry.clientAddress, clientPrefixV4: Int(entry.clientPrefixV4), clientPrefixV6: Int(entry.clientPrefixV6))
        let texts = QueryLogRecord.Texts(
            account: entry.account, type: entry.type, format: entry.format, source: entry.source, rcode: entry.rcode,
            requestID: entry.requestID)
        var host = entry.host
        return host.withUTF8 { offer(record, host: UnsafeRawBufferPointer($0), texts: texts) }
    }

    /// Every waiting entry, oldest first (the writer's side). The queue's next block is
    /// allocated here, outside the lock; the records are decoded (clients masked) after it.
    public func drain() -> [QueryLogEntry] {
        var block = QueryLogBuffer.allocate(byteCount: byteCapacity)
        defer { block.deallocate() }
        let used = locked_buffer.withLock { $0.drain(into: &block) }
        return QueryLogRecord.decode(UnsafeRawBufferPointer(start: block, count: used))
    }

    /// The most entries, and bytes, that wait at once.
    public let capacity: Int
    public let byteCapacity: Int

    /// Entries waiting for the writer.
    public var pending: Int { locked_buffer.withLock { $0.count } }

    /// Entries dropped because the queue was full.
    public var dropped: Int { locked_buffer.withLock { $0.dropped } }

    /// Entries the writer committed to the store.
    public var written: Int { writtenCounter.load(ordering: .relaxed) }

    /// Counts `count` entries committed (the writer's side).
    public func noteWritten(_ count: Int) {
        writtenCounter.add(count, ordering: .relaxed)
    }

    /// Whether a lookup is logged at `rate` (0-1): always at 1, never at 0, else for that share
    /// of calls. One relaxed atomic increment and a few multiplications (SplitMix64 of a
    /// sequence number): no system call, no lock.
    public func sampled(rate: Double) -> Bool {
        if rate >= 1 { return true }
        if rate <= 0 { return false }
        var value = sampleSequence.wrappingAdd(1, ordering: .relaxed).newValue &* 0x9E37_79B9_7F4A_7C15
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        value ^= value >> 31
        // The top 53 bits as a fraction in [0, 1).
        return Double(value >> 11) * 0x1p-53 < rate
    }
}
