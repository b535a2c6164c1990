/// How a `BoundedCache` chooses what to evict: the cache owns keys, values and the index, and
/// tells its policy which slots were filled, used and emptied; the policy keeps whatever order
/// or counts it needs per slot and names the victim when the cache is full.
///
/// A policy is a value type with no lock, guarded by the cache's owner like the cache itself.
/// Slot numbers are the cache's (`0..<slotEnd`); a slot is reused after it is freed.
public protocol EvictionPolicy {
    /// A policy for a cache of `capacity` entries (the cache calls `setCapacity` when it changes).
    init(capacity: Int)

    /// The cache's bound changed (entries beyond it are evicted next, through `evict`).
    mutating func setCapacity(_ capacity: Int)

    /// The cache's slot arrays grew to hold `slots` entries: the policy may reserve as much.
    mutating func reserveSlots(_ slots: Int)

    /// A new key whose `cacheHash` is `hash` is about to be stored, before the evictions that
    /// make room for it (so that what they evict cannot change how the key is admitted).
    mutating func admitting(hash: Int)

    /// The new key announced by `admitting` was stored in `slot`.
    mutating func inserted(_ slot: Int32, hash: Int)

    /// A lookup found the entry in `slot` (a hit). This is the hit path: keep it to a few stores.
    mutating func accessed(_ slot: Int32, hash: Int)

    /// The owner removed the entry in `slot` (not an eviction).
    mutating func removed(_ slot: Int32)

    /// Chooses the entry to evict, forgets its slot and returns it; nil when the policy holds no
    /// entry. The cache then removes it and calls `evicted`.
    mutating func evict() -> Int32?

    /// The entry `evict` chose is gone; `hash` is its key's `cacheHash` (for a policy that
    /// remembers evicted keys).
    mutating func evicted(_ slot: Int32, hash: Int)

    /// Forgets every slot.
    mutating func removeAll()

    /// Calls `body` with every occupied slot, those the policy would keep longest first.
    func forEach(_ body: (Int32) -> Void)
}

extension EvictionPolicy {
    public mutating func admitting(hash: Int) {}

    public mutating func evicted(_ slot: Int32, hash: Int) {}
}

/// The upper 32 bits of a multiplicative mix of a key's `cacheHash`: what `BoundedCache`'s index
/// and a policy's own tables use, so that callers that shard by the low bits of the same hash
/// still spread over a whole table.
@inline(__always)
func cacheFingerprint(_ hash: Int) -> UInt64 {
    (UInt64(bitPattern: Int64(hash)) &* 0x9E37_79B9_7F4A_7C15) >> 32
}

/// A key of `BoundedCache`. `cacheHash` places it in the index and the policy's tables; it is
/// the key's `hashValue` unless the key keeps a hash of its own (`CacheKey`).
public protocol BoundedCacheKey: Hashable {
    var cacheHash: Int { get }
}

extension BoundedCacheKey {
    public var cacheHash: Int { hashValue }
}

extension String: BoundedCacheKey {}
extension Int: BoundedCacheKey {}
