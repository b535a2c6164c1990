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
        let pending = pendingHits(key)
        var record = recorder.record(key)
        if pending > 0 {
            if record == nil { record = DomainStats() }
            record!.cacheDnsNum += UInt64(pending)
        }
        return record
    }

    /// Where a paged read of the statistics stands. First the recorder's records by slot (the
    /// order their keys were first seen; keys are never removed), then the cache's keys whose
    /// hits are only pending (no record yet), by shard and slot, `extra` of them listed so far
    /// (they count against the recorder's limit as in `snapshot`).
    public struct Position: Sendable, Equatable {
        public var inCache: Bool
        public var shard: Int
        public var slot: Int
        public var extra: Int

        public init(inCache: Bool, shard: Int, slot: Int, extra: Int) {
            self.inCache = inCache
            self.shard = shard
            self.slot = slot
            self.extra = extra
        }

        public static let start = Position(inCache: false, shard: 0, slot: 0, extra: 0)
    }

    /// Up to `limit` records from `position`, pending hits included, and the position after
    /// them (nil at the end). O(limit) work in the recorder's part; the cache's part looks at
    /// no more than `scanLimit` slots a page, so a page there may be short (or empty) before
    /// the end. A record present from the first page to the last is listed once (a key whose
    /// record is made between pages may be listed twice, once from each part); the walk ends.
    public func page(from position: Position, limit: Int, scanLimit: Int) -> (records: [(StatsKey, DomainStats)], next: Position?) {
        var result: [(StatsKey, DomainStats)] = []
        var position = position
        if !position.inCache {
            let page = recorder.page(from: position.slot, limit: limit)
            result = page.records.map { key, record in
                var record = record
                record.cacheDnsNum += UInt64(pendingHits(key))
                return (key, record)
            }
            if let next = page.next { return (result, Position(inCache: false, shard: 0, slot: next, extra: 0)) }
            position = Position(inCache: true, shard: 0, slot: 0, extra: 0)
            if result.count >= limit { return (result, position) }
        }
        let room = min(limit - result.count, recorder.limit - recorder.count - position.extra)
        guard room > 0 else { return (result, nil) }
        let page = cache.page(
            from: AnswerCache.Position(shard: position.shard, slot: position.slot), limit: room, scanLimit: scanLimit,
            withPendingHits: true
        )
        var extra = position.extra
        for (key, _, hits) in page.entries {
            let statsKey = StatsKey(key)
            guard recorder.record(statsKey) == nil else { continue }
            var record = DomainStats()
            record.cacheDnsNum = UInt64(hits)
            result.append((statsKey, record))
            extra += 1
        }
        return (result, page.next.map { Position(inCache: true, shard: $0.shard, slot: $0.slot, extra: extra) })
    }

    /// The records of one domain, every family and client network, pending hits included.
    public func records(domain: HostName) -> [(StatsKey, DomainStats)] {
        let (found, networks) = recorder.records(domain: domain.value)
        var result = found.map { key, record in
            var record = record
            record.cacheDnsNum += UInt64(pendingHits(key))
            return (key, record)
        }
        let listed = Set(found.map(\.0))
        for network in Set(networks + [StatsKey.defaultNetwork]).sorted() {
            for family in RecordFamily.allCases {
                let key = StatsKey(domain: domain.value, family: family, network: network)
                guard !listed.contains(key) else { continue }
                let hits = pendingHits(key)
                guard hits > 0 else { continue }
                var record = DomainStats()
                record.cacheDnsNum = UInt64(hits)
                result.append((key, record))
            }
        }
        return result
    }

    /// The hits of `key` still counted in its cache slot.
    private func pendingHits(_ key: StatsKey) -> UInt32 {
        HostName(key.domain).map {
            cache.pendingHits(
                of: CacheKey(host: $0, family: key.family, network: StatsKey.cacheNetwork(key.network)))
        } ?? 0
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

    /// The cache key's network of a record's `network`: "" for `defaultNetwork`.
    static func cacheNetwork(_ network: String) -> String { network == defaultNetwork ? "" : network }
}
