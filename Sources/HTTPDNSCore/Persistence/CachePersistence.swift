/// Where cache changes go to survive a restart. The engine calls these on its hot path, so an
/// implementation only queues the change and writes it behind, on its own thread.
public protocol CachePersistence: Sendable {
    func upsert(account: String, key: CacheKey, entry: CacheEntry)
    func remove(account: String, key: CacheKey)
    func removeAll(account: String)
    /// Calls `completion` once every change queued before this call is durable.
    func flush(completion: @escaping @Sendable () -> Void)
}

/// Durable storage of accounts changed at run time through the admin API. Calls are synchronous:
/// when `save` returns the change is on disk, so the API only acknowledges what survives a crash.
public protocol AccountPersistence: Sendable {
    /// Stores the account's configuration as a JSON object (secrets included: the database is the
    /// service's own, like the config file).
    func saveAccount(id: String, json: String) throws
    /// Remembers that the account was deleted, so a file-declared account stays deleted.
    func deleteAccount(id: String) throws
    /// Runtime accounts: id → JSON, or nil for accounts deleted at run time.
    func loadAccounts() throws -> [String: String?]
}
