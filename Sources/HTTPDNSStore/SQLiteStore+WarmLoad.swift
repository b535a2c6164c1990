import HTTPDNSCore

extension SQLiteStore {
    /// The account's persisted cache as one array: what `loadCache(...deliver:)` delivers, in
    /// its order; empty when the file is found damaged (it is set aside: the cache starts cold).
    public func loadCache(
        account: String, now: Timestamp, discardExpiredOlderThan: Double, keepExpired: Bool
    ) throws(StoreError) -> [(CacheKey, CacheEntry)] {
        var entries: [(CacheKey, CacheEntry)] = []
        let outcome = try loadCache(
            account: account, now: now, discardExpiredOlderThan: discardExpiredOlderThan, keepExpired: keepExpired
        ) { entries += $0 }
        return outcome.setAside ? [] : entries
    }
}
