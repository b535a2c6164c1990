/// The account's cache as the admin API and the store see it: storing, restoring, listing,
/// evicting and persisting entries.
extension ResolverEngine {
    /// Caches `entry` for `key` and, with `persist`, writes it and removes what it evicted in
    /// the store.
    func store(_ entry: CacheEntry, for key: CacheKey, persist: Bool) {
        let evicted = cache.set(entry, for: key)
        stats.absorb(evicted)
        guard persist, let persistence else { return }
        persistence.upsert(account: accountID, key: key, entry: entry)
        for (old, _) in evicted { persistence.remove(account: accountID, key: old) }
    }

    /// Puts entries loaded from the store back into the cache (no write-back).
    public func restore(_ entries: consuming [(CacheKey, CacheEntry)]) {
        stats.absorb(cache.set(entries))
    }

    /// Empties the cache and leaves the store as it is: after a warm load that failed partway,
    /// whose rows stay in the file for the next start (or went with a damaged file set aside).
    public func discardRestored() {
        stats.absorb(cache.removeAll().departures)
    }

    /// Every cached entry, sorted by host, family and network.
    public func cachedEntries() -> [(CacheKey, CacheEntry)] {
        cache.snapshot().sorted {
            ($0.0.host.value, $0.0.family.rawValue, $0.0.network) < ($1.0.host.value, $1.0.family.rawValue, $1.0.network)
        }
    }

    /// One page of the cache in shard and slot order (`AnswerCache.page`): O(scanLimit), no sort.
    public func cachePage(from position: AnswerCache.Position, limit: Int, scanLimit: Int) -> (
        entries: [AnswerCache.Listed], next: AnswerCache.Position?
    ) {
        cache.page(from: position, limit: limit, scanLimit: scanLimit)
    }

    /// Evicts every entry of `host`; returns how many.
    public func evict(host: HostName) -> Int {
        let removed = cache.remove(host: host)
        stats.absorb(removed)
        for (key, _) in removed { persistence?.remove(account: accountID, key: key) }
        return removed.count
    }

    /// Empties the cache; returns how many entries it held.
    public func evictAll() -> Int {
        persistence?.removeAll(account: accountID)
        let removed = cache.removeAll()
        stats.absorb(removed.departures)
        return removed.count
    }

    public var cacheCount: Int { cache.count }

    public var now: Timestamp { clock.now() }

    /// Asks the store to commit every cache change made so far; `completion` says whether they
    /// are durable (at once, `.durable`, without a store). Never waits for a failing store's retries.
    public func persisted(completion: @escaping @Sendable (FlushOutcome) -> Void) {
        if let persistence { persistence.flush(completion: completion) } else { completion(.durable) }
    }

    /// True when an answer the engine just gave for this account was written to its store (so
    /// it is durable once `persisted` says `.durable`): the account caches and persists, and the
    /// answer was cached (a TTL above 0) or came from the cache.
    public func persists(_ answer: ResolvedAnswer) -> Bool {
        let config = current.config
        return persistence != nil && config.cacheEnable && config.persistentCacheIPEnabled && answer.originTTL > 0
    }
}
