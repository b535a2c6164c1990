import Synchronization

/// The cache of one account: LRU shards behind short `Mutex` critical sections. Small caches use
/// one shard so that eviction order is exact LRU; large ones spread keys over 16 shards (each an
/// LRU of its share of the limit) so that HTTP threads rarely contend.
///
/// Beside each entry the cache keeps two flags the refresh rules need: whether the entry was
/// requested since it was stored (the scheduled prefetch refreshes only those), and whether its
/// refresh-ahead has fired (it fires once per entry).
public final class AnswerCache: Sendable {
    /// An entry and its refresh bookkeeping.
    struct Slot: Sendable {
        var entry: CacheEntry
        var requested = false
        var refreshAheadFired = false
    }

    /// One lock and the LRU it guards.
    fileprivate final class Shard: Sendable {
        let lru: Mutex<LRUCache<CacheKey, Slot>>

        init(capacity: Int) { lru = Mutex(LRUCache(capacity: capacity)) }

        func withLock<R>(_ body: (inout LRUCache<CacheKey, Slot>) -> R) -> R {
            lru.withLock { body(&$0) }
        }
    }

    /// What a request found: the entry, and whether this request is the one that should start
    /// its refresh-ahead.
    public struct Hit: Sendable {
        public var entry: CacheEntry
        public var startRefreshAhead: Bool
    }

    fileprivate let shards: [Shard]

    public init(limit: Int) {
        let count = limit >= 16_384 ? 16 : 1
        shards = (0..<count).map { Shard(capacity: Self.share(of: limit, shard: $0, shards: count)) }
    }

    /// Shard `shard`'s part of `limit`: the parts add up to exactly `limit`.
    static func share(of limit: Int, shard: Int, shards: Int) -> Int {
        limit / shards + (shard < limit % shards ? 1 : 0)
    }

    private func shard(_ key: CacheKey) -> Shard {
        shards.count == 1 ? shards[0] : shards[Int(UInt(bitPattern: key.hashValue) % UInt(shards.count))]
    }

    /// A request's lookup: returns the entry (expired or not), marks it recently used and
    /// requested. With `refreshAhead`, the first request that finds the entry fresh but inside its
    /// refresh-ahead window (`CacheEntry.isInRefreshAheadWindow`) is told to start the refresh.
    public func hit(_ key: CacheKey, at now: Timestamp, refreshAhead: Bool) -> Hit? {
        shard(key).withLock { lru in
            lru.withValue(for: key, touch: true) { slot in
                slot.requested = true
                var start = false
                if refreshAhead && !slot.refreshAheadFired && slot.entry.isInRefreshAheadWindow(at: now) {
                    slot.refreshAheadFired = true
                    start = true
                }
                return Hit(entry: slot.entry, startRefreshAhead: start)
            }
        }
    }

    /// The entry for `key`, expired or not, marking it recently used.
    public func get(_ key: CacheKey) -> CacheEntry? {
        shard(key).withLock { $0.value(for: key)?.entry }
    }

    /// The entry for `key` without touching its recency.
    public func peek(_ key: CacheKey) -> CacheEntry? {
        shard(key).withLock { $0.peek(key)?.entry }
    }

    /// Stores an entry (not yet requested); returns the keys evicted to stay within the limit.
    @discardableResult
    public func set(_ entry: CacheEntry, for key: CacheKey) -> [CacheKey] {
        shard(key).withLock { $0.set(Slot(entry: entry), for: key) }.map(\.0)
    }

    /// Changes the stored entry in place (recency and flags untouched) if it is still the entry
    /// stored at `storedAt`; returns whether it changed anything.
    @discardableResult
    public func modify(_ key: CacheKey, storedAt: Timestamp, _ change: (inout CacheEntry) -> Void) -> Bool {
        shard(key).withLock { lru in
            lru.withValue(for: key, touch: false) { slot -> Bool in
                guard slot.entry.storedAt == storedAt else { return false }
                change(&slot.entry)
                return true
            } ?? false
        }
    }

    @discardableResult
    public func remove(_ key: CacheKey) -> CacheEntry? {
        shard(key).withLock { $0.removeValue(for: key)?.entry }
    }

    /// Removes every key of `host` (all families and networks); returns how many.
    public func remove(host: HostName) -> [CacheKey] {
        var removed: [CacheKey] = []
        for shard in shards {
            shard.withLock { cache in
                for (key, _) in cache.entries where key.host == host {
                    cache.removeValue(for: key)
                    removed.append(key)
                }
            }
        }
        return removed
    }

    public func removeAll() -> Int {
        shards.reduce(0) { total, shard in
            total + shard.withLock { cache in
                let count = cache.count
                cache.removeAll()
                return count
            }
        }
    }

    public var count: Int { shards.reduce(0) { $0 + $1.withLock { $0.count } } }

    /// A snapshot of every entry (for listing), in no particular order across shards.
    public func snapshot() -> [(CacheKey, CacheEntry)] {
        shards.flatMap { $0.withLock { $0.entries.map { ($0.0, $0.1.entry) } } }
    }

    /// Keys of entries requested since they were stored that expire at or before `deadline`
    /// (already expired ones included): what the scheduled prefetch refreshes.
    public func requestedKeys(expiringBy deadline: Timestamp) -> [CacheKey] {
        shards.flatMap { shard in
            shard.withLock { cache in
                cache.entries.compactMap { key, slot in
                    slot.requested && slot.entry.expiresAt <= deadline ? key : nil
                }
            }
        }
    }

    /// Every key, in no particular order.
    public func keys() -> [CacheKey] {
        shards.flatMap { $0.withLock { $0.entries.map(\.0) } }
    }
}

extension AnswerCache {
    /// Applies a new total limit; returns the keys evicted to respect it.
    public func resize(limit: Int) -> [CacheKey] {
        shards.indices.flatMap { index in
            let capacity = Self.share(of: limit, shard: index, shards: shards.count)
            return shards[index].withLock { $0.setCapacity(capacity) }.map(\.0)
        }
    }
}
