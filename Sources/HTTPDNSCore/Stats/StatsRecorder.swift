import Synchronization

/// The statistics records of one account behind a `Mutex`. Bounded: once `limit` records exist,
/// events for new keys are dropped and counted in `droppedEvents` (random names must not grow
/// memory without end).
///
/// The records live in an `LRUCache` used as a plain map (its capacity is the limit, so it never
/// evicts; recency is not touched): its parallel arrays and 8-byte index buckets take about half
/// the memory of a `Dictionary<StatsKey, DomainStats>`, whose power-of-two buckets each hold a
/// whole key and record (the benchmark measured 100 000 records at over 400 bytes each).
public final class StatsRecorder: Sendable {
    private let records: Mutex<LRUCache<StatsKey, DomainStats>>
    private let dropped = Atomic<UInt64>(0)
    public let limit: Int

    public init(limit: Int = 100_000) {
        self.limit = limit
        records = Mutex(LRUCache(capacity: limit))
    }

    /// Applies `change` to the record of `key`, creating it if there is room.
    public func update(_ key: StatsKey, _ change: (inout DomainStats) -> Void) {
        let stored = records.withLock { table -> Bool in
            if table.withValue(for: key, touch: false, change) != nil { return true }
            guard table.count < limit else { return false }
            var record = DomainStats()
            change(&record)
            table.set(record, for: key)
            return true
        }
        if !stored { dropped.add(1, ordering: .relaxed) }
    }

    public func snapshot() -> [(StatsKey, DomainStats)] {
        records.withLock { $0.entries }.sorted { $0.0 < $1.0 }
    }

    public func record(_ key: StatsKey) -> DomainStats? {
        records.withLock { $0.peek(key) }
    }

    public var droppedEvents: UInt64 { dropped.load(ordering: .relaxed) }
}
