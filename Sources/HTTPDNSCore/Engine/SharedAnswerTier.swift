/// A second cache tier the replicas of a fleet share (Redis, in HTTPDNSRedis), asked by the
/// engine on a local miss before its upstreams, and given every answer the upstreams gave.
/// The hit path never touches it.
///
/// Every method returns at once and never blocks; completions run on the tier's own thread.
/// A tier that is down or slow answers `.miss(holdsLock: false)` within its timeout: the
/// engine then asks its upstreams as it would without one.
public protocol SharedAnswerTier: Sendable {
    /// Looks up an answer another replica stored for `key` of `account`. When there is none,
    /// the tier tries to take the key's lock (this replica resolves it; the others wait for its
    /// answer up to `waitMilliseconds`, then go on by themselves). `completion` runs exactly once.
    func lookup(
        account: String, key: CacheKey, waitMilliseconds: Int, completion: @escaping @Sendable (SharedLookupResult) -> Void)

    /// Stores an answer fetched from the upstreams for `keepSeconds` (its TTL and the window in
    /// which it may still be served stale), and releases the key's lock when `holdsLock`.
    func store(account: String, key: CacheKey, entry: CacheEntry, keepSeconds: Double, holdsLock: Bool)

    /// Releases the key's lock after a resolution that gave nothing to store.
    func release(account: String, key: CacheKey)
}

/// What the shared tier found.
public enum SharedLookupResult: Sendable, Equatable {
    /// An answer another replica stored (its `storedAt` and TTL as that replica cached it).
    case found(CacheEntry)
    /// Nothing usable: ask the upstreams. `holdsLock`: this replica took the key's lock and must
    /// `store` or `release` it.
    case miss(holdsLock: Bool)
}
