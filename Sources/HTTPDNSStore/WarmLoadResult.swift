import HTTPDNSCore

/// What a warm load found for one account.
struct WarmLoadResult {
    /// Entries to put back into the cache.
    var entries: [(CacheKey, CacheEntry)] = []
    /// Rows skipped because their host or family no longer validates (also deleted).
    var skippedInvalid = 0
    /// Expired rows deleted from the file.
    var discardedExpired = 0
}
