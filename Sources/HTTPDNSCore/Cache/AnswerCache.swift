import Synchronization

/// The cache of one account: LRU shards behind short `Mutex` critical sections. Small caches use
/// one shard so that eviction order is exact LRU; large ones spread keys over 16 shards (each an
/// LRU of its share of the limit) so that HTTP threads rarely contend.
public final class AnswerCache: Sendable {
    /// One lock and the LRU it guards.
    fileprivate final class Shard: Sendable {
        let lru: Mutex<LRUCache<CacheKey, CacheEntry>>

        init(capacity: Int) { lru = Mutex(LRUCache(capacity: capacity)) }

        func withLock<R>(_ body: (inout LRUCache<CacheKey, CacheEntry>) -> R) -> R {
            lru.withLock { body(&$0) }
        }
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

    /// The entry for `key`, expired or not, marking it recently used.
    public func get(_ key: CacheKey) -> CacheEntry? {
        shard(key).withLock { $0.value(for: key) }
    }

    /// The entry for `key` without touching its recency.
    public func peek(_ key: CacheKey) -> CacheEntry? {
        shard(key).withLock { $0.peek(key) }
    }

    /// Stores an entry; returns the keys evicted to stay within the limit.
    @discardableResult
    public func set(_ entry: CacheEntry, for key: CacheKey) -> [CacheKey] {
        shard(key).withLock { $0.set(entry, for: key) }.map(\.0)
    }

    @discardableResult
    public func remove(_ key: CacheKey) -> CacheEntry? {
        shard(key).withLock { $0.removeValue(for: key) }
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
        shards.flatMap { $0.withLock { $0.entries } }
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
