import HTTPDNSCore

/// The queued cache changes of one account: optionally "delete all its rows" first, then the
/// latest change per key.
struct PendingAccountChanges: Sendable, Hashable {
    /// Delete every row of the account before applying `changes`.
    var removesAll = false
    /// The latest change per key.
    var changes: [CacheKey: PendingChange] = [:]

    /// How many writes this stands for (a `removesAll` counts as one).
    var changeCount: Int { changes.count + (removesAll ? 1 : 0) }
}
