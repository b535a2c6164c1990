import Synchronization

/// The cache of one account: shards behind short `Mutex` critical sections, each a
/// `BoundedCache` with the S3-FIFO policy (`S3FIFOPolicy`): a name asked once (a flood of random
/// names, a scan, a preload nobody asks for again) passes through a small probationary queue and
/// does not push out the names in use, and a hit only raises a 2-bit count under the shard lock.
/// Small caches use one shard so that the eviction order is exact; large ones spread keys over 16
/// shards (each with its share of the limit) so that HTTP threads rarely contend.
///
/// Beside each entry the cache keeps two flags the refresh rules need: whether the entry was
/// requested since it was stored (the scheduled prefetch refreshes only those), and whether its
/// refresh-ahead has fired (it fires once per entry); and the hits not yet added to the
/// statistics record (`cacheDnsNum`), counted under the shard lock the hit takes anyway and
/// handed over when the key leaves the cache or the statistics are read.
public final class AnswerCache: Sendable {
    /// An entry and its refresh bookkeeping.
    struct Slot: Sendable {
        var entry: CacheEntry
        var requested = false
        var refreshAheadFired = false
        var pendingHits: UInt32 = 0
    }

    /// A key that left the cache (evicted or removed) with its hits not yet in the statistics.
    public typealias Departure = (key: CacheKey, hits: UInt32)

    /// The map of a shard.
    typealias Storage = BoundedCache<CacheKey, Slot, S3FIFOPolicy>

    /// One lock and the cache it guards.
    fileprivate final class Shard: Sendable {
        let storage: Mutex<Storage>

        init(capacity: Int) { storage = Mutex(Storage(capacity: capacity)) }

        func withLock<R>(_ body: (inout Storage) -> R) -> R {
            storage.withLock { body(&$0) }
        }
    }

    /// What a request found: the entry, and whether this request is the one that should start
    /// its refresh-ahead.
    public struct Hit: Sendable {
        public var entry: CacheEntry
        public var startRefreshAhead: Bool
        /// Hits to add to the statistics now (non-zero only when the slot's counter is full).
        public var overflowHits: UInt32
    }

    fileprivate let shards: [Shard]
    /// The same shards, unretained (they live as long as `shards`): the hit path reaches its
    /// shard without a retain, which both HTTP threads would otherwise do on the same objects.
    private let shardRefs: [Unmanaged<Shard>]

    public init(limit: Int) {
        let count = Self.shardCount(limit: limit)
        shards = (0..<count).map { Shard(capacity: Self.share(of: limit, shard: $0, shards: count)) }
        shardRefs = shards.map { Unmanaged.passUnretained($0) }
    }

    /// How many shards a cache of `limit` entries has; a key's shard is its `cacheHash` modulo
    /// that (the cache simulator lays its policies out the same way).
    public static func shardCount(limit: Int) -> Int { limit >= 16_384 ? 16 : 1 }

    /// Shard `shard`'s part of `limit`: the parts add up to exactly `limit`.
    public static func share(of limit: Int, shard: Int, shards: Int) -> Int {
        limit / shards + (shard < limit % shards ? 1 : 0)
    }

    /// The shard of a key's hash (its low bits; the shard's index uses the high ones).
    private func shardRef(_ hash: Int) -> Unmanaged<Shard> {
        shardRefs.count == 1 ? shardRefs[0] : shardRefs[Int(UInt(bitPattern: hash) % UInt(shardRefs.count))]
    }

    private func shard(_ hash: Int) -> Shard { shardRef(hash).takeUnretainedValue() }

    private func shard(_ key: CacheKey) -> Shard { shard(key.cacheHash) }

    /// A request's lookup: returns the entry (expired or not), counts a use of it, marks it
    /// requested, and counts a hit when it is fresh. With `refreshAhead`, the first request that
    /// finds the entry fresh but inside its refresh-ahead window
    /// (`CacheEntry.isInRefreshAheadWindow`) is told to start the refresh. The key is hashed once.
    public func hit(_ key: CacheKey, at now: Timestamp, refreshAhead: Bool) -> Hit? {
        hit(hash: key.cacheHash, matching: { $0 == key }, at: now, refreshAhead: refreshAhead)
    }

    /// The same for a key borrowed from a request.
    public func hit(_ key: BorrowedCacheKey, at now: Timestamp, refreshAhead: Bool) -> Hit? {
        hit(hash: key.cacheHash, matching: key.matches, at: now, refreshAhead: refreshAhead)
    }

    private func hit(hash: Int, matching matches: (CacheKey) -> Bool, at now: Timestamp, refreshAhead: Bool) -> Hit? {
        shardRef(hash)._withUnsafeGuaranteedRef { shard in
            shard.withLock { cache in
                cache.withValue(hash: hash, matching: matches, touch: true) { slot in
                    slot.requested = true
                    var start = false
                    var overflow: UInt32 = 0
                    if !slot.entry.isExpired(at: now) {
                        if slot.pendingHits == UInt32.max {
                            overflow = slot.pendingHits
                            slot.pendingHits = 0
                        }
                        slot.pendingHits += 1
                        if refreshAhead && !slot.refreshAheadFired && slot.entry.isInRefreshAheadWindow(at: now) {
                            slot.refreshAheadFired = true
                            start = true
                        }
                    }
                    return Hit(entry: slot.entry, startRefreshAhead: start, overflowHits: overflow)
                }
            }
        }
    }

    /// The entry for `key`, expired or not, counted as a use.
    public func get(_ key: CacheKey) -> CacheEntry? {
        shard(key).withLock { $0.value(for: key)?.entry }
    }

    /// The entry for `key`, not counted as a use.
    public func peek(_ key: CacheKey) -> CacheEntry? {
        shard(key).withLock { $0.peek(key)?.entry }
    }

    /// Stores an entry (not yet requested; a replaced entry's uncounted hits carry over) and
    /// returns the keys evicted to stay within the limit. Replacing an entry (a refresh) is not a
    /// use: a prefetch of a long tail must not make the tail look hot. A new entry enters the
    /// policy's probation like any other (a preloaded or warm-loaded one too: it is stored, and
    /// stays if it is used); past the limit the oldest unused entries go first, so a warm load
    /// larger than the limit keeps the entries loaded last.
    @discardableResult
    public func set(_ entry: consuming CacheEntry, for key: consuming CacheKey) -> [Departure] {
        let hash = key.cacheHash
        // Taken inside the lock, so that the key and the entry move into the shard uncopied (and
        // the shard is reached without a retain, as a hit reaches it).
        var moving = Optional((consume key, consume entry))
        return shardRef(hash)._withUnsafeGuaranteedRef { shard in
            shard.withLock {
                let (key, entry) = moving.take()!
                return Self.set(consume entry, for: consume key, hash: hash, in: &$0)
            }
        }
    }

    /// Stores entries in their order, as `set` each; each key and entry moves out of `entries`
    /// into the cache (a warm load's million names are neither copied nor released here).
    /// Returns what left the cache.
    public func set(_ entries: consuming [(CacheKey, CacheEntry)]) -> [Departure] {
        var entries = entries
        // Taken from the end, which moves each out; reversed first (by moves, as the buffer
        // swaps) to keep the given order.
        entries.withUnsafeMutableBufferPointer { $0.reverse() }
        var departures: [Departure] = []
        while let (key, entry) = entries.popLast() {
            let left = set(consume entry, for: consume key)
            if !left.isEmpty { departures += left }
        }
        return departures
    }

    /// `set` in a shard already locked.
    private static func set(
        _ entry: consuming CacheEntry, for key: consuming CacheKey, hash: Int, in cache: inout Storage
    ) -> [Departure] {
        cache.setOrUpdate(Slot(entry: consume entry), for: consume key, hash: hash) { slot, new in
            let hits = slot.pendingHits
            slot = new
            slot.pendingHits = hits
        }.map { ($0.0, $0.1.pendingHits) }
    }

    /// Changes the stored entry in place (use count and flags untouched) if it is still the entry
    /// stored at `storedAt`; returns whether it changed anything.
    @discardableResult
    public func modify(_ key: CacheKey, storedAt: Timestamp, _ change: (inout CacheEntry) -> Void) -> Bool {
        shard(key).withLock { cache in
            cache.withValue(for: key, touch: false) { slot -> Bool in
                guard slot.entry.storedAt == storedAt else { return false }
                change(&slot.entry)
                return true
            } ?? false
        }
    }

    /// Removes every key of `host` (all families and networks).
    public func remove(host: HostName) -> [Departure] {
        var removed: [Departure] = []
        for shard in shards {
            shard.withLock { cache in
                var keys: [CacheKey] = []
                cache.forEach { key, _ in if key.host == host { keys.append(key) } }
                for key in keys {
                    if let slot = cache.removeValue(for: key) { removed.append((key, slot.pendingHits)) }
                }
            }
        }
        return removed
    }

    /// Empties the cache; returns the keys that had uncounted hits, and how many entries it held.
    public func removeAll() -> (departures: [Departure], count: Int) {
        var departures: [Departure] = []
        var count = 0
        for shard in shards {
            shard.withLock { cache in
                count += cache.count
                cache.forEach { key, slot in if slot.pendingHits > 0 { departures.append((key, slot.pendingHits)) } }
                cache.removeAll()
            }
        }
        return (departures, count)
    }

    /// Hits not yet in the statistics, per key (only keys with some).
    public func pendingHits() -> [Departure] {
        var result: [Departure] = []
        for shard in shards {
            shard.withLock { cache in
                cache.forEach { key, slot in if slot.pendingHits > 0 { result.append((key, slot.pendingHits)) } }
            }
        }
        return result
    }

    /// The hits of `key` not yet in the statistics.
    public func pendingHits(of key: CacheKey) -> UInt32 {
        shard(key).withLock { $0.peek(key)?.pendingHits ?? 0 }
    }

    public var count: Int { shards.reduce(0) { $0 + $1.withLock { $0.count } } }

    /// Slots allocated over all shards (`BoundedCache.allocatedSlots`): 0 while the cache is empty.
    public var allocatedSlots: Int { shards.reduce(0) { $0 + $1.withLock { $0.allocatedSlots } } }

    /// A snapshot of every entry (for listing), in no particular order across shards.
    public func snapshot() -> [(CacheKey, CacheEntry)] {
        var result: [(CacheKey, CacheEntry)] = []
        for shard in shards { shard.withLock { $0.forEach { key, slot in result.append((key, slot.entry)) } } }
        return result
    }

    /// Where a listing of the cache stands: a shard and a slot in it (`BoundedCache.forEachSlot`).
    public struct Position: Sendable, Equatable {
        public var shard: Int
        public var slot: Int

        public init(shard: Int, slot: Int) {
            self.shard = shard
            self.slot = slot
        }

        public static let start = Position(shard: 0, slot: 0)
    }

    /// One page of a listing: an entry and its hits not yet in the statistics.
    public typealias Listed = (key: CacheKey, entry: CacheEntry, pendingHits: UInt32)

    /// Up to `limit` entries from `position` in shard and slot order, looking at no more than
    /// `scanLimit` slots, and the position after them (nil once every shard was walked). Each
    /// shard's lock is held only while its part of the page is copied. An entry present from the
    /// first page to the last is listed exactly once; one added or removed in between may be
    /// missed, or listed twice if it was removed and added again in a later slot. The walk always
    /// ends: positions only grow, and a shard has at most its capacity of slots. A position past
    /// the last shard (one made for another cache) ends the walk at once. With `withPendingHits`
    /// only entries with hits not yet in the statistics are listed.
    public func page(from position: Position, limit: Int, scanLimit: Int, withPendingHits: Bool = false) -> (
        entries: [Listed], next: Position?
    ) {
        var entries: [Listed] = []
        entries.reserveCapacity(min(limit, 1024))
        var current = position
        var scanned = 0
        while current.shard < shards.count, current.shard >= 0 {
            let left = limit - entries.count
            let budget = scanLimit - scanned
            if left <= 0 || budget <= 0 { return (entries, current) }
            let (resume, looked) = shards[current.shard].withLock { cache -> (Int?, Int) in
                let start = max(0, current.slot)
                let resume = cache.forEachSlot(
                    from: start, limit: left, scanLimit: budget, where: { _, slot in !withPendingHits || slot.pendingHits > 0 }
                ) { key, slot in
                    entries.append((key, slot.entry, slot.pendingHits))
                }
                return (resume, (resume ?? max(start, cache.slotEnd)) - start)
            }
            scanned += looked
            if let resume {
                return (entries, Position(shard: current.shard, slot: resume))
            }
            current = Position(shard: current.shard + 1, slot: 0)
        }
        return (entries, nil)
    }

    /// Keys of entries requested since they were stored that expire at or before `deadline`
    /// (already expired ones included): what the scheduled prefetch refreshes.
    public func requestedKeys(expiringBy deadline: Timestamp) -> [CacheKey] {
        var keys: [CacheKey] = []
        for shard in shards {
            shard.withLock { cache in
                cache.forEach { key, slot in if slot.requested && slot.entry.expiresAt <= deadline { keys.append(key) } }
            }
        }
        return keys
    }

    /// Every key, in no particular order.
    public func keys() -> [CacheKey] {
        var keys: [CacheKey] = []
        for shard in shards { shard.withLock { $0.forEach { key, _ in keys.append(key) } } }
        return keys
    }
}

extension AnswerCache {
    /// Applies a new total limit; returns the keys evicted to respect it.
    public func resize(limit: Int) -> [Departure] {
        shards.indices.flatMap { index in
            let capacity = Self.share(of: limit, shard: index, shards: shards.count)
            return shards[index].withLock { $0.setCapacity(capacity) }.map { ($0.0, $0.1.pendingHits) }
        }
    }
}
