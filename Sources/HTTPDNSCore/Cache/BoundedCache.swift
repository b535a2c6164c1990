/// A bounded map whose eviction order is its `Policy`'s (`LRUPolicy`, `S3FIFOPolicy`). A value
/// type with no lock: the owner guards it.
///
/// Layout, chosen for a cache of millions of entries: keys and values live in parallel arrays
/// indexed by slot, and the policy keeps its own per-slot state (links, counts) in arrays indexed
/// the same way, so that its bookkeeping touches no key; the index is an open-addressing table
/// (linear probing, backward-shift deletion) whose buckets hold a slot number and the upper 32
/// bits of the key's mixed hash: a lookup compares those before it touches a key, and the table
/// can be rebuilt and shifted without hashing any key again. That is 8 bytes a bucket where a
/// `Dictionary<Key, Int>` would hold a second copy of every key. A lookup is one probe of that
/// index plus the policy's `accessed` (for S3-FIFO, one byte's increment).
///
/// Both grow by half rather than double, since at a million entries the slack is what costs:
/// the arrays never past `capacity`, the index to any size (a bucket is picked by multiplying
/// the fingerprint by the table size, not by masking), kept between half and three quarters full.
public struct BoundedCache<Key: BoundedCacheKey, Value, Policy: EvictionPolicy> {
    public private(set) var capacity: Int
    public private(set) var count = 0
    private var keys: [Key?] = []
    private var values: [Value?] = []
    private var policy: Policy
    /// Slots freed by removals, reused before the arrays grow.
    private var free: [Int32] = []
    /// Open-addressing index: `fingerprint << 32 | (slot + 1)`, 0 for an empty bucket, where the
    /// fingerprint is the upper half of the key's mixed hash.
    private var table: [UInt64] = []

    public init(capacity: Int) {
        precondition(capacity >= 0, "a cache cannot hold a negative number of entries")
        precondition(capacity < Int(Int32.max), "a cache holds fewer than 2^31 entries")
        self.capacity = capacity
        policy = Policy(capacity: capacity)
    }

    private static func fingerprint(_ hash: Int) -> UInt64 { cacheFingerprint(hash) }

    /// Slots the arrays have room for: 0 until the first entry (a cache costs what it holds,
    /// not its `capacity`), then growing by half as entries come.
    public var allocatedSlots: Int { keys.capacity }

    /// The value for `key`, counted as a use (a hit, for the policy).
    public mutating func value(for key: Key) -> Value? {
        let hash = key.cacheHash
        guard let slot = find(key, hash: hash) else { return nil }
        policy.accessed(slot, hash: hash)
        return values[Int(slot)]
    }

    /// Runs `body` on the stored value for `key` in place, counting a use when `touch` is true.
    /// Nil when the key is absent.
    public mutating func withValue<R>(for key: Key, touch: Bool, _ body: (inout Value) -> R) -> R? {
        withValue(for: key, hash: key.cacheHash, touch: touch, body)
    }

    /// `withValue(for:touch:_:)` with the key's `cacheHash` computed by the caller.
    public mutating func withValue<R>(for key: Key, hash: Int, touch: Bool, _ body: (inout Value) -> R) -> R? {
        withValue(hash: hash, matching: { $0 == key }, touch: touch, body)
    }

    /// The same for the key whose `cacheHash` is `hash` and for which `matches` is true: a caller
    /// can look up a key it has not built (`BorrowedCacheKey`).
    public mutating func withValue<R>(hash: Int, matching matches: (Key) -> Bool, touch: Bool, _ body: (inout Value) -> R) -> R? {
        guard let bucket = findBucket(hash: hash, matching: matches) else { return nil }
        let slot = Int32(truncatingIfNeeded: table[bucket] & 0xFFFF_FFFF) - 1
        if touch { policy.accessed(slot, hash: hash) }
        return body(&values[Int(slot)]!)
    }

    /// The value for `key`, not counted as a use.
    public func peek(_ key: Key) -> Value? {
        guard let slot = find(key, hash: key.cacheHash) else { return nil }
        return values[Int(slot)]
    }

    /// Stores `value` (a replaced value counts as a use) and returns the entries evicted to make
    /// room.
    @discardableResult
    public mutating func set(_ value: Value, for key: Key) -> [(Key, Value)] {
        set(value, for: key, hash: key.cacheHash)
    }

    /// `set(_:for:)` with the key's `cacheHash` computed by the caller.
    @discardableResult
    public mutating func set(_ value: consuming Value, for key: consuming Key, hash: Int) -> [(Key, Value)] {
        if let slot = find(key, hash: hash) {
            values[Int(slot)] = value
            policy.accessed(slot, hash: hash)
            return []
        }
        return insertNew(value, for: key, hash: hash)
    }

    /// Stores `value` for `key` when the key is absent; when it is present, `update` is given the
    /// stored value and `value` and changes the stored one in place instead, not counted as a
    /// use. One probe of the index either way. The key and value move in, with no copy.
    /// Returns the entries evicted to make room for a new key.
    public mutating func setOrUpdate(
        _ value: consuming Value, for key: consuming Key, hash: Int, update: (inout Value, consuming Value) -> Void
    ) -> [(Key, Value)] {
        if let slot = find(key, hash: hash) {
            update(&values[Int(slot)]!, value)
            return []
        }
        return insertNew(value, for: key, hash: hash)
    }

    /// Stores a key known to be absent, evicting what the limit requires first.
    private mutating func insertNew(_ value: consuming Value, for key: consuming Key, hash: Int) -> [(Key, Value)] {
        // A cache of capacity 0 (a shard whose share of a small limit is nothing) stores nothing.
        guard capacity > 0 else { return [(key, value)] }
        policy.admitting(hash: hash)
        var evicted: [(Key, Value)] = []
        while count >= capacity, let removed = evictOne() { evicted.append(removed) }
        let slot: Int32
        if let reused = free.popLast() {
            slot = reused
            keys[Int(slot)] = key
            values[Int(slot)] = value
        } else {
            slot = Int32(keys.count)
            reserveSlotIfFull()
            keys.append(key)
            values.append(value)
        }
        if (count + 1) * 4 > table.count * 3 { rebuildTable(minimumCount: count + 1) }
        insertIntoTable(Self.fingerprint(hash) << 32 | UInt64(slot + 1))
        policy.inserted(slot, hash: hash)
        count += 1
        return evicted
    }

    @discardableResult
    public mutating func removeValue(for key: Key) -> Value? {
        guard let bucket = findBucket(key, hash: key.cacheHash) else { return nil }
        let slot = Int32(truncatingIfNeeded: table[bucket] & 0xFFFF_FFFF) - 1
        policy.removed(slot)
        return remove(bucket: bucket).1
    }

    public mutating func removeAll() {
        keys.removeAll()
        values.removeAll()
        policy.removeAll()
        free.removeAll()
        table.removeAll()
        count = 0
    }

    /// Changes the bound; evicts the policy's victims beyond it and returns them.
    public mutating func setCapacity(_ newCapacity: Int) -> [(Key, Value)] {
        precondition(newCapacity >= 0, "a cache cannot hold a negative number of entries")
        precondition(newCapacity < Int(Int32.max), "a cache holds fewer than 2^31 entries")
        capacity = newCapacity
        policy.setCapacity(newCapacity)
        var evicted: [(Key, Value)] = []
        while count > capacity, let removed = evictOne() { evicted.append(removed) }
        return evicted
    }

    /// Keys and values in the policy's order (`EvictionPolicy.forEach`; for LRU, from most to
    /// least recently used).
    public var entries: [(Key, Value)] {
        var result: [(Key, Value)] = []
        result.reserveCapacity(count)
        forEach { result.append(($0, $1)) }
        return result
    }

    /// Calls `body` with every key and value in the policy's order, without copying the whole
    /// cache first.
    public func forEach(_ body: (Key, Value) -> Void) {
        policy.forEach { slot in
            if let key = keys[Int(slot)], let value = values[Int(slot)] { body(key, value) }
        }
    }

    /// Slot positions are how a listing pages through the cache without sorting it: an entry keeps
    /// its slot from insertion to removal (policies order slots, they never move entries), so a walk by increasing slot sees every entry present
    /// for the whole walk exactly once. One past the last slot that may hold an entry.
    public var slotEnd: Int { keys.count }

    /// Calls `body` with the entries in slots `start...` for which `include` is true, in slot
    /// order, until `limit` entries were passed or `scanLimit` slots were looked at; returns the
    /// slot to continue from, nil when the slots are exhausted. O(scanLimit) whatever the cache's
    /// size; recency untouched.
    public func forEachSlot(
        from start: Int, limit: Int, scanLimit: Int, where include: (Key, Value) -> Bool = { _, _ in true },
        _ body: (Key, Value) -> Void
    ) -> Int? {
        var slot = max(0, start)
        var passed = 0
        var scanned = 0
        while slot < keys.count {
            if passed >= limit || scanned >= scanLimit { return slot }
            if let key = keys[slot], let value = values[slot], include(key, value) {
                body(key, value)
                passed += 1
            }
            slot += 1
            scanned += 1
        }
        return nil
    }

    // MARK: Slots

    /// Removes the policy's victim.
    private mutating func evictOne() -> (Key, Value)? {
        guard let slot = policy.evict() else { return nil }
        let key = keys[Int(slot)]!
        let hash = key.cacheHash
        guard let bucket = findBucket(key, hash: hash) else { preconditionFailure("an evicted slot is not in the index") }
        let removed = remove(bucket: bucket)
        policy.evicted(slot, hash: hash)
        return removed
    }

    /// Removes the entry whose index bucket is `bucket` (the policy has forgotten its slot).
    private mutating func remove(bucket: Int) -> (Key, Value) {
        let slot = Int32(truncatingIfNeeded: table[bucket] & 0xFFFF_FFFF) - 1
        removeFromTable(bucket)
        let index = Int(slot)
        let key = keys[index]!
        let value = values[index]!
        keys[index] = nil
        values[index] = nil
        free.append(slot)
        count -= 1
        return (key, value)
    }

    /// Grows the slot arrays by half when they are full, never past `capacity` (the arrays'
    /// own growth would double them).
    private mutating func reserveSlotIfFull() {
        guard keys.count == keys.capacity else { return }
        let grown = min(capacity, max(16, keys.capacity + keys.capacity / 2))
        keys.reserveCapacity(grown)
        values.reserveCapacity(grown)
        policy.reserveSlots(grown)
    }

    // MARK: Index

    /// The home bucket of a table entry (or of a fingerprint shifted into place): the
    /// fingerprint scaled to the table's size, so that any size works and the order of
    /// fingerprints is the order of buckets.
    private func home(_ entry: UInt64) -> Int {
        Int(truncatingIfNeeded: ((entry >> 32) &* UInt64(table.count)) >> 32)
    }

    /// The bucket after `bucket`, wrapping at the end of the table.
    private func after(_ bucket: Int) -> Int {
        bucket + 1 == table.count ? 0 : bucket + 1
    }

    /// How many buckets forward `to` lies from `from`, wrapping at the end of the table.
    private func distance(from: Int, to: Int) -> Int {
        to >= from ? to - from : to - from + table.count
    }

    private func find(_ key: Key, hash: Int) -> Int32? {
        findBucket(key, hash: hash).map { Int32(truncatingIfNeeded: table[$0] & 0xFFFF_FFFF) - 1 }
    }

    private func findBucket(_ key: Key, hash: Int) -> Int? {
        findBucket(hash: hash) { $0 == key }
    }

    private func findBucket(hash: Int, matching matches: (Key) -> Bool) -> Int? {
        guard !table.isEmpty else { return nil }
        let fingerprint = Self.fingerprint(hash)
        var bucket = home(fingerprint << 32)
        while true {
            let entry = table[bucket]
            if entry == 0 { return nil }
            if entry >> 32 == fingerprint, let key = keys[Int(entry & 0xFFFF_FFFF) - 1], matches(key) { return bucket }
            bucket = after(bucket)
        }
    }

    private mutating func insertIntoTable(_ entry: UInt64) {
        var bucket = home(entry)
        while table[bucket] != 0 { bucket = after(bucket) }
        table[bucket] = entry
    }

    /// Empties `bucket` and shifts the entries after it back, so that no probe sequence is
    /// broken and no tombstones accumulate.
    private mutating func removeFromTable(_ bucket: Int) {
        var hole = bucket
        var next = after(hole)
        while table[next] != 0 {
            let home = home(table[next])
            // Move the entry at `next` into the hole unless its home lies cyclically in (hole, next].
            if distance(from: home, to: hole) < distance(from: home, to: next) {
                table[hole] = table[next]
                hole = next
            }
            next = after(next)
        }
        table[hole] = 0
    }

    /// Grows the table to twice `minimumCount` buckets (half full; it is rebuilt again past
    /// three quarters, so it grows by half each time); entries move by their fingerprints, with
    /// no key hashed again.
    private mutating func rebuildTable(minimumCount: Int) {
        let old = table
        table = [UInt64](repeating: 0, count: max(16, minimumCount * 2))
        for entry in old where entry != 0 { insertIntoTable(entry) }
    }
}

extension BoundedCache: Sendable where Key: Sendable, Value: Sendable, Policy: Sendable {}

/// A bounded map that evicts the least recently used key.
public typealias LRUCache<Key: BoundedCacheKey, Value> = BoundedCache<Key, Value, LRUPolicy>
