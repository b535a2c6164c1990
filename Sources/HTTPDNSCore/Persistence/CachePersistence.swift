/// Where cache changes go to survive a restart. The engine calls these on its hot path, so an
/// implementation only queues the change and writes it behind, on its own thread.
public protocol CachePersistence: Sendable {
    func upsert(account: String, key: CacheKey, entry: CacheEntry)
    func remove(account: String, key: CacheKey)
    func removeAll(account: String)
    /// Tries to commit every change queued before this call, then calls `completion` once with
    /// whether they are durable. A store that cannot commit says so (`.failed`) at once rather
    /// than waiting for its retries: the caller answers from memory and tells its client.
    func flush(completion: @escaping @Sendable (FlushOutcome) -> Void)
}

/// Whether the changes a `flush` covered are durable.
public enum FlushOutcome: Sendable, Equatable {
    /// Committed: they survive a crash.
    case durable
    /// Not committed (the store keeps them queued and retries); `reason` says why, for logs
    /// and replies.
    case failed(reason: String)

    public var isDurable: Bool { self == .durable }
}

/// Durable storage of accounts changed at run time through the admin API. A save or a deletion
/// runs on the store's own thread and completes once the change is on disk (or failed), so the
/// API acknowledges only what survives a crash without blocking an HTTP thread on the disk.
public protocol AccountPersistence: Sendable {
    /// Stores the account's configuration as a JSON object (secrets included: the database is the
    /// service's own, like the config file). `completion` runs once, on the store's thread, when
    /// the row is committed and synced (`.success`) or could not be (`.failure`, an
    /// `AccountWriteFailure`: nothing was written, the caller changes nothing and may retry);
    /// changes complete in the order they were asked for.
    func saveAccount(id: String, json: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
    /// Remembers that the account was deleted, so a file-declared account stays deleted. Same
    /// completion rules as `saveAccount`.
    func deleteAccount(id: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
    /// Runtime accounts: id → JSON, or nil for accounts deleted at run time. Waits (start-up).
    func loadAccounts() throws -> [String: String?]
}

/// Why an account could not be written: the store cannot commit now (a full disk, a read-only or
/// damaged file, shutting down). Nothing was written; a retry after `retryAfterSeconds` may
/// succeed. The admin API answers it as 503 `StoreUnavailable` with `Retry-After`.
public struct AccountWriteFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The short reason (the kind of failure and the SQLite result code; never a path), for replies.
    public var reason: String
    /// Whole seconds (at least 1) after which the store expects to try writing again.
    public var retryAfterSeconds: Int
    /// The full error, for the log.
    public var detail: String

    public init(reason: String, retryAfterSeconds: Int, detail: String) {
        self.reason = reason
        self.retryAfterSeconds = max(1, retryAfterSeconds)
        self.detail = detail
    }

    public var description: String { detail }
}

/// The state of the service's store, as `/readyz` and `/metrics` show it.
public struct PersistenceHealth: Sendable, Equatable {
    /// False while writes fail (they are retried with backoff; the cache keeps serving).
    public var healthy: Bool
    /// Changes queued and not yet committed.
    public var pendingChanges: Int
    /// Why the last write failed, while unhealthy.
    public var lastError: String?
    /// Unix time of the first failure of the current unhealthy spell.
    public var failingSince: Timestamp?
    /// The last database file found damaged and moved aside (at start-up or since), kept for the
    /// operator; nil when none was.
    public var damagedFile: DamagedFile?

    public init(
        healthy: Bool, pendingChanges: Int = 0, lastError: String? = nil, failingSince: Timestamp? = nil, damagedFile: DamagedFile? = nil
    ) {
        self.healthy = healthy
        self.pendingChanges = pendingChanges
        self.lastError = lastError
        self.failingSince = failingSince
        self.damagedFile = damagedFile
    }
}

/// A database file SQLite reported damaged (`SQLITE_CORRUPT`, `SQLITE_NOTADB`), which the store
/// moved aside, next to where it was, before starting a new one: nothing in it is deleted.
public struct DamagedFile: Sendable, Equatable {
    /// Where the file was (the configured database path).
    public var path: String
    /// Where it is now: `<path>.corrupt-<unix time>`.
    public var movedTo: String
    /// The short reason (the kind of damage and the SQLite result code).
    public var reason: String
    /// Unix time of the move.
    public var at: Timestamp
    /// Found when the service started (its accounts could not be read: the service starts with
    /// the configuration's, and Redis's when configured), rather than while it ran (its
    /// accounts were copied into the new file).
    public var atStartUp: Bool

    public init(path: String, movedTo: String, reason: String, at: Timestamp, atStartUp: Bool) {
        self.path = path
        self.movedTo = movedTo
        self.reason = reason
        self.at = at
        self.atStartUp = atStartUp
    }
}
