/// What the HTTP layer asks of replication when replicas share their accounts and
/// cache changes through Redis. Implemented by `AccountReplicator`; nil without Redis.
public protocol Replication: Sendable {
    /// Writes the account (`config` nil: its deletion) to the shared store first, then applies
    /// it on this replica (local database, then the registry). `completion` runs once, on any
    /// thread: with the record now held here, or with why nothing was changed (`unavailable`),
    /// why it is not known (`unknownOutcome`), or why this replica could not store what Redis
    /// now holds (`localStore`).
    /// With `ifVersion`, the write is made only if the shared store still holds the account at
    /// that version (0: holds no record of it): else `conflict`, and nothing changed.
    func writeAccount(
        id: String, config: AccountConfig?, ifVersion: Int64?,
        completion: @escaping @Sendable (Result<AccountRecord, ReplicationError>) -> Void)
    /// The record this replica holds of `id` (its version and configuration, read together).
    func held(_ id: String) -> AccountRecord?
    /// Tells the other replicas of a cache change made here (best effort: not retried).
    func publish(account: String, change: CacheInvalidation.Change)
    /// Records the signature of a signed change in the replay memory every replica shares,
    /// unless it is there already. `completion` runs once, on any thread: true the first time
    /// (make the change), false for a replay, `unavailable` when the check could not be made
    /// (make no change: a replay could not be told from a first use).
    func claimSignature(
        account: String, signature: String, expiry: Timestamp, completion: @escaping @Sendable (Result<Bool, ReplicationError>) -> Void)
}

/// Why an account change through replication did not (fully) happen. Never holds a secret.
public struct ReplicationError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// Redis could not be reached, refused the write, or did not answer before its deadline
        /// (past which it refuses it): nothing changed anywhere.
        case unavailable
        /// The write was sent and the connection broke before the answer: Redis may have made
        /// the change (then every replica follows it) or not.
        case unknownOutcome
        /// Redis holds the change, but this replica's database could not store it.
        case localStore
        /// A conditional write (`ifVersion`) found the account at another version: nothing changed.
        case conflict
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// The shared side of account replication: Redis, as HTTPDNSRedis implements it. Every call
/// returns at once and completes once, on any thread.
public protocol SharedAccountStore: Sendable {
    /// Stores the change under the next version (one counter for all accounts) and publishes
    /// it, atomically; completes with the record as stored. `record.version` is the version
    /// this replica holds of the account: the new one is above it, and above the one stored,
    /// even when the counter was lost with Redis's data.
    /// With `ifVersion`, stores it only if the store holds the account at that version (0: holds
    /// no record of it), else fails with `conflict`.
    func write(
        _ record: AccountRecord, ifVersion: Int64?, completion: @escaping @Sendable (Result<AccountRecord, ReplicationError>) -> Void)
    /// Stores the record unless the shared store holds the account at this version or newer
    /// (version 0: unless it holds any record of it, and then under the next version), and
    /// publishes it when stored; completes with the record the store holds afterwards.
    func offer(_ record: AccountRecord, completion: @escaping @Sendable (Result<AccountRecord, ReplicationError>) -> Void)
    /// Every record the shared store holds.
    func loadAll(completion: @escaping @Sendable (Result<[AccountRecord], ReplicationError>) -> Void)
    /// Publishes a cache change to every replica (best effort).
    func publish(_ invalidation: CacheInvalidation)
    /// Stores `signature` of `account` until `expiry` (Unix seconds) unless it is stored:
    /// completes with whether it stored it.
    func claim(
        account: String, signature: String, expiry: Timestamp, completion: @escaping @Sendable (Result<Bool, ReplicationError>) -> Void)
}

extension Replication {
    /// `writeAccount` whatever version the shared store holds (the admin API's).
    public func writeAccount(
        id: String, config: AccountConfig?, completion: @escaping @Sendable (Result<AccountRecord, ReplicationError>) -> Void
    ) {
        writeAccount(id: id, config: config, ifVersion: nil, completion: completion)
    }
}

extension SharedAccountStore {
    /// `write` whatever version the store holds.
    public func write(_ record: AccountRecord, completion: @escaping @Sendable (Result<AccountRecord, ReplicationError>) -> Void) {
        write(record, ifVersion: nil, completion: completion)
    }
}
