/// What one replica holds of the shared account set, and what it does when Redis tells it
/// something: the decisions of account replication as values, with no I/O. Its shell
/// (`AccountReplicator` in HTTPDNSRedis) performs the actions, in order, after the decision.
///
/// Redis is the source of truth and wins by version: a record newer than the one held is
/// applied here; a record held here that Redis lacks, or holds older (Redis lost its data, or
/// this replica made a change Redis has not seen), is offered to Redis, which keeps it only if
/// it is still newer there. Version 0 (an account from the configuration file, or stored before
/// Redis was configured) is only offered when Redis has no record of the account at all, and a
/// version-0 deletion is not offered.
public struct AccountReplicationState: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        /// Make this replica hold the record: write it to the local database, then create,
        /// update or remove the account.
        case apply(AccountRecord)
        /// Write the record to Redis, unless Redis holds the account at this version or newer
        /// (version 0: unless Redis holds any record of it; Redis then assigns the version).
        case offer(AccountRecord)
    }

    /// The record each account is held at here, deletions included.
    public private(set) var local: [String: AccountRecord]

    /// The state at start: the configuration file's accounts (version 0), overlaid by the
    /// records of the local database (a later record of the same id wins).
    public init(local records: [AccountRecord]) {
        var local: [String: AccountRecord] = [:]
        for record in records { local[record.id] = record }
        self.local = local
    }

    /// After (re)connecting: `shared` is every record Redis holds. Applies what Redis holds
    /// newer (or, at the same version, different), offers what this replica holds that Redis
    /// lacks or holds older. Actions come in id order.
    public mutating func reconcile(shared: [AccountRecord]) -> [Action] {
        var byID: [String: AccountRecord] = [:]
        for record in shared {
            // Two records of one id cannot come from one Redis hash; keep the newer anyway.
            if let seen = byID[record.id], seen.version >= record.version { continue }
            byID[record.id] = record
        }
        var actions: [Action] = []
        for id in Set(byID.keys).union(local.keys).sorted() {
            switch (local[id], byID[id]) {
            case (let held?, let redis?):
                if held.version > redis.version {
                    actions.append(.offer(held))
                } else {
                    actions += receive(redis)
                }
            case (let held?, nil):
                // Not a version-0 deletion, nor a record that failed to apply here (`forget`).
                if held.version > 0 || (held.version == 0 && !held.isDeleted) { actions.append(.offer(held)) }
            case (nil, let redis?):
                actions += receive(redis)
            case (nil, nil):
                break
            }
        }
        return actions
    }

    /// A record Redis holds now (published by a replica, or returned by this replica's write
    /// or offer): applied when it is newer than the one held, or differs at the same version
    /// (Redis wins); otherwise nothing.
    public mutating func receive(_ record: AccountRecord) -> [Action] {
        if let held = local[record.id] {
            guard held.version < record.version || (held.version == record.version && held != record) else { return [] }
        }
        local[record.id] = record
        return [.apply(record)]
    }

    /// After `record` could not be applied here: holds the account at version -1 (unless a newer
    /// record came meanwhile), so that the next message or reconcile applies it again.
    public mutating func forget(_ record: AccountRecord) {
        guard local[record.id] == record else { return }
        local[record.id]?.version = -1
    }

    /// The live accounts held here, by id.
    public var accounts: [String: AccountConfig] {
        local.compactMapValues(\.config)
    }
}
