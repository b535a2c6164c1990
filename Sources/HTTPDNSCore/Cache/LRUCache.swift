/// A bounded map that evicts the least recently used key. A value type with no lock: the owner
/// guards it.
///
/// Layout, chosen for a cache of millions of entries: keys, values and the recency links live
/// in parallel arrays indexed by slot, so that moving an entry to the front touches two 32-bit
/// links and copies nothing; the index is an open-addressing table (linear probing,
/// backward-shift deletion) whose buckets hold a slot number and the upper 32 bits of the
/// key's mixed hash: a lookup compares those before it touches a key, and the table can be
/// rebuilt and shifted without hashing any key again. That is 8 bytes a bucket where a
/// `Dictionary<Key, Int>` would hold a second copy of every key.
///
/// Both grow by half rather than double, since at a million entries the slack is what costs:
/// the arrays never past `capacity`, the index to any size (a bucket is picked by multiplying
/// the fingerprint by the table size, not by masking), kept between half and three quarters full.
public struct LRUCache<Key: Hashable, Value> {
    private struct Link {
        var previous: Int32
        var next: Int32
    }

    public private(set) var capacity: Int
    public private(set) var count = 0
    private var keys: [Key?] = []
    private var values: [Value?] = []
    private var links: [Link] = []
    /// Slots freed by removals, reused before the arrays grow.
    private var free: [Int32] = []
    /// Open-addressing index: `fingerprint << 32 | (slot + 1)`, 0 for an empty bucket, where the
    /// fingerprint is the upper half of the key's mixed hash.
    private var table: [UInt64] = []
    /// Most recently used.
    private var head: Int32 = -1
    /// Least recently used.
    private var tail: Int32 = -1

    public init(capacity: Int) {
        precondition(capacity >= 0, "an LRU cache cannot hold a negative number of entries")
        precondition(capacity < Int(Int32.max), "an LRU cache holds fewer than 2^31 entries")
        self.capacity = capacity
    }

    /// The upper 32 bits of a multiplicative mix of `hash`: bucket numbers are its top bits, so
    /// callers that shard by the low bits of the same hash still spread over the whole table.
    private static func fingerprint(_ hash: Int) -> UInt64 {
        (UInt64(bitPattern: Int64(hash)) &* 0x9E37_79B9_7F4A_7C15) >> 32
    }

    /// The value for `key`, marking it most recently used.
    public mutating func value(for key: Key) -> Value? {
        guard let slot = find(key, hash: key.hashValue) else { return nil }
        moveToFront(slot)
        return values[Int(slot)]
    }

    /// Runs `body` on the stored value for `key` in place, marking it most recently used when
    /// `touch` is true. Nil when the key is absent.
    public mutating func withValue<R>(for key: Key, touch: Bool, _ body: (inout Value) -> R) -> R? {
        withValue(for: key, hash: key.hashValue, touch: touch, body)
    }

    /// `withValue(for:touch:_:)` with the key's `hashValue` computed by the caller.
    public mutating func withValue<R>(for key: Key, hash: Int, touch: Bool, _ body: (inout Value) -> R) -> R? {
        withValue(hash: hash, matching: { $0 == key }, touch: touch, body)
    }

    /// The same for the key whose `hashValue` is `hash` and for which `matches` is true: a caller
    /// can look up a key it has not built (`BorrowedCacheKey`).
    public mutating func withValue<R>(hash: Int, matching matches: (Key) -> Bool, touch: Bool, _ body: (inout Value) -> R) -> R? {
        guard let bucket = findBucket(hash: hash, matching: matches) else { return nil }
        let slot = Int32(truncatingIfNeeded: table[bucket] & 0xFFFF_FFFF) - 1
        if touch { moveToFront(slot) }
        return body(&values[Int(slot)]!)
    }

    /// The value for `key` without touching its recency.
    public func peek(_ key: Key) -> Value? {
        guard let slot = find(key, hash: key.hashValue) else { return nil }
        return values[Int(slot)]
    }

    /// Stores `value` as most recently used and returns the entries evicted to make room.
    @discardableResult
    public mutating func set(_ value: Value, for key: Key) -> [(Key, Value)] {
        set(value, for: key, hash: key.hashValue)
    }

    /// `set(_:for:)` with the key's `hashValue` computed by the caller.
    @discardableResult
    public mutating func set(_ value: Value, for key: Key, hash: Int) -> [(Key, Value)] {
        if let slot = find(key, hash: hash) {
            values[Int(slot)] = value
            moveToFront(slot)
            return []
        }
        // A cache of capacity 0 (a shard whose share of a small limit is nothing) stores nothing.
        guard capacity > 0 else { return [(key, value)] }
        var evicted: [(Key, Value)] = []
        while count >= capacity, let removed = removeLeastRecent() { evicted.append(removed) }
        let slot: Int32
        if let reused = free.popLast() {
            slot = reused
            keys[Int(slot)] = key
            values[Int(slot)] = value
            links[Int(slot)] = Link(previous: -1, next: head)
        } else {
            slot = Int32(keys.count)
            reserveSlotIfFull()
            keys.append(key)
            values.append(value)
            links.append(Link(previous: -1, next: head))
        }
        if (count + 1) * 4 > table.count * 3 { rebuildTable(minimumCount: count + 1) }
        insertIntoTable(Self.fingerprint(hash) << 32 | UInt64(slot + 1))
        if head >= 0 { links[Int(head)].previous = slot }
        head = slot
        if tail < 0 { tail = slot }
        count += 1
        return evicted
    }

    @discardableResult
    public mutating func removeValue(for key: Key) -> Value? {
        guard let bucket = findBucket(key, hash: key.hashValue) else { return nil }
        return remove(bucket: bucket).1
    }

    public mutating func removeAll() {
        keys.removeAll()
        values.removeAll()
        links.removeAll()
        free.removeAll()
        table.removeAll()
        count = 0
        head = -1
        tail = -1
    }

    /// Changes the bound; evicts least recently used entries beyond it and returns them.
    public mutating func setCapacity(_ newCapacity: Int) -> [(Key, Value)] {
        precondition(newCapacity >= 0, "an LRU cache cannot hold a negative number of entries")
        precondition(newCapacity < Int(Int32.max), "an LRU cache holds fewer than 2^31 entries")
        capacity = newCapacity
        var evicted: [(Key, Value)] = []
        while count > capacity, let removed = removeLeastRecent() { evicted.append(removed) }
        return evicted
    }

    /// Keys and values from most to least recently used.
    public var entries: [(Key, Value)] {
        var result: [(Key, Value)] = []
        result.reserveCapacity(count)
        forEach { result.append(($0, $1)) }
        return result
    }

    /// Calls `body` with every key and value, from most to least recently used, without copying
    /// the whole cache first.
    public func forEach(_ body: (Key, Value) -> Void) {
        var slot = head
        while slot >= 0 {
            if let key = keys[Int(slot)], let value = values[Int(slot)] { body(key, value) }
            slot = links[Int(slot)].next
        }
    }

    /// Slot positions are how a listing pages through the cache without sorting it: an entry keeps
    /// its slot from insertion to removal, so a walk by increasing slot sees every entry present
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

    // MARK: Recency list

    private mutating func removeLeastRecent() -> (Key, Value)? {
        guard tail >= 0, let key = keys[Int(tail)], let bucket = findBucket(key, hash: key.hashValue) else { return nil }
        return remove(bucket: bucket)
    }

    /// Removes the entry whose index bucket is `bucket`.
    private mutating func remove(bucket: Int) -> (Key, Value) {
        let slot = Int32(truncatingIfNeeded: table[bucket] & 0xFFFF_FFFF) - 1
        removeFromTable(bucket)
        unlink(slot)
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
        links.reserveCapacity(grown)
    }

    private mutating func moveToFront(_ slot: Int32) {
        guard slot != head else { return }
        unlink(slot)
        links[Int(slot)] = Link(previous: -1, next: head)
        if head >= 0 { links[Int(head)].previous = slot }
        head = slot
        if tail < 0 { tail = slot }
    }

    private mutating func unlink(_ slot: Int32) {
        let link = links[Int(slot)]
        if link.previous >= 0 { links[Int(link.previous)].next = link.next } else if head == slot { head = link.next }
        if link.next >= 0 { links[Int(link.next)].previous = link.previous } else if tail == slot { tail = link.previous }
        links[Int(slot)] = Link(previous: -1, next: -1)
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

extension LRUCache: Sendable where Key: Sendable, Value: Sendable {}
