/// An account's statistics records as clients read them: the recorder's records plus the cache
/// hits still counted in the cache's slots (`AnswerCache.Slot.pendingHits`), which a hit adds
/// under the shard lock it holds anyway instead of taking the recorder's lock.
public final class EngineStats: Sendable {
    let recorder: StatsRecorder
    private let cache: AnswerCache

    init(recorder: StatsRecorder, cache: AnswerCache) {
        self.recorder = recorder
        self.cache = cache
    }

    /// Every record, sorted by key, with pending hits included. Keys that only have pending hits
    /// get a record while the recorder's limit allows.
    public func snapshot() -> [(StatsKey, DomainStats)] {
        var records: [StatsKey: DomainStats] = [:]
        for (key, record) in recorder.snapshot() { records[key] = record }
        for (key, hits) in cache.pendingHits() {
            let statsKey = StatsKey(key)
            if records[statsKey] == nil {
                guard records.count < recorder.limit else { continue }
                records[statsKey] = DomainStats()
            }
            records[statsKey]!.cacheDnsNum += UInt64(hits)
        }
        return records.map { ($0.key, $0.value) }.sorted { $0.0 < $1.0 }
    }

    /// The record of one key, pending hits included.
    public func record(_ key: StatsKey) -> DomainStats? {
        let pending = HostName(key.domain).map {
            cache.pendingHits(of: CacheKey(host: $0, family: key.family, network: key.network == StatsKey.defaultNetwork ? "" : key.network))
        } ?? 0
        var record = recorder.record(key)
        if pending > 0 {
            if record == nil { record = DomainStats() }
            record!.cacheDnsNum += UInt64(pending)
        }
        return record
    }

    public var droppedEvents: UInt64 { recorder.droppedEvents }

    public var limit: Int { recorder.limit }

    /// Applies `change` to the record of `key` (see `StatsRecorder.update`).
    public func update(_ key: StatsKey, _ change: (inout DomainStats) -> Void) {
        recorder.update(key, change)
    }

    /// Adds the uncounted hits of keys that left the cache to their records.
    func absorb(_ departures: [AnswerCache.Departure]) {
        for (key, hits) in departures where hits > 0 {
            recorder.update(StatsKey(key)) { $0.cacheDnsNum += UInt64(hits) }
        }
    }
}

extension StatsKey {
    /// `sp` of the records of accounts without per-network caches.
    public static let defaultNetwork = "default"

    /// The record a cache key's events go to.
    public init(_ key: CacheKey) {
        self.init(domain: key.host.value, family: key.family, network: key.network.isEmpty ? Self.defaultNetwork : key.network)
    }
}
