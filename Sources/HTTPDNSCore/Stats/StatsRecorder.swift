import Synchronization

/// The statistics records of one account behind a `Mutex`. Bounded: once `limit` records exist,
/// events for new keys are dropped and counted in `droppedEvents` (random names must not grow
/// memory without end). The records are kept compact (`StatsTable`): every resolved name has
/// one, so they weigh as much as the cache itself.
public final class StatsRecorder: Sendable {
    private let records: Mutex<StatsTable>
    private let dropped = Atomic<UInt64>(0)
    public let limit: Int

    public init(limit: Int = 100_000) {
        self.limit = limit
        records = Mutex(StatsTable(limit: limit))
    }

    /// Applies `change` to the record of `key`, creating it if there is room.
    public func update(_ key: StatsKey, _ change: (inout DomainStats) -> Void) {
        let stored = records.withLock { $0.update(key, change) }
        if !stored { dropped.add(1, ordering: .relaxed) }
    }

    public func snapshot() -> [(StatsKey, DomainStats)] {
        records.withLock { $0.entries }.sorted { $0.0 < $1.0 }
    }

    /// A page of records in the order their keys were first seen (`StatsTable.page`).
    public func page(from slot: Int, limit: Int) -> (records: [(StatsKey, DomainStats)], next: Int?) {
        records.withLock { $0.page(from: slot, limit: limit) }
    }

    /// The records of one domain (`StatsTable.records(domain:)`) and the networks seen.
    public func records(domain: String) -> (records: [(StatsKey, DomainStats)], networks: [String]) {
        records.withLock { ($0.records(domain: domain), $0.networksSeen) }
    }

    public var count: Int { records.withLock { $0.count } }

    public func record(_ key: StatsKey) -> DomainStats? {
        records.withLock { $0.record(key) }
    }

    public var droppedEvents: UInt64 { dropped.load(ordering: .relaxed) }
}
