import HTTPDNSCore

/// What a warm load found for one account.
struct WarmLoadResult {
    /// Entries delivered to be put back into the cache.
    var loaded = 0
    /// Rows skipped because their host or family no longer validates (also deleted).
    var skippedInvalid = 0
    /// Expired rows deleted from the file.
    var discardedExpired = 0
}

/// What a warm load that delivered its entries in batches did (`SQLiteStore.loadCache(...deliver:)`).
public struct WarmLoadOutcome: Sendable, Equatable {
    /// Entries delivered.
    public var loaded: Int
    /// True when the file was found damaged and set aside: the entries delivered before must be
    /// dropped, as the cache starts cold (the file that replaces it holds none).
    public var setAside: Bool
}
