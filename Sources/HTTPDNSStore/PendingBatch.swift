import HTTPDNSCore

/// The write-behind queue's content: cache changes not yet committed, coalesced by key so the
/// last change to a key wins and a key written a thousand times costs one row write.
/// A value type without locks; `SQLiteStore` keeps it behind a `Mutex`.
struct PendingBatch: Sendable {
    private(set) var accounts: [String: PendingAccountChanges] = [:]
    /// Writes the batch stands for (distinct keys, plus one per account-wide delete).
    private(set) var count = 0

    var isEmpty: Bool { accounts.isEmpty }

    /// True when a change to `key` is queued (a new change to it replaces that one, adding nothing).
    func holds(account: String, key: CacheKey) -> Bool {
        accounts[account]?.changes[key] != nil
    }

    mutating func upsert(account: String, key: CacheKey, entry: CacheEntry) {
        record(.upsert(entry), account: account, key: key)
    }

    mutating func remove(account: String, key: CacheKey) {
        record(.remove, account: account, key: key)
    }

    /// Forgets the account's queued changes and queues "delete all its rows" instead.
    mutating func removeAll(account: String) {
        count -= accounts[account]?.changeCount ?? 0
        accounts[account] = PendingAccountChanges(removesAll: true)
        count += 1
    }

    private mutating func record(_ change: PendingChange, account: String, key: CacheKey) {
        if accounts[account, default: PendingAccountChanges()].changes.updateValue(change, forKey: key) == nil {
            count += 1
        }
    }

    /// Puts back an `older` batch (one that failed to commit) underneath this one: where both
    /// hold a change for a key, this batch's (newer) change wins; an account-wide delete queued
    /// since makes the older changes of that account moot.
    mutating func mergeOlder(_ older: PendingBatch) {
        for (account, olderChanges) in older.accounts {
            guard let newer = accounts[account] else {
                accounts[account] = olderChanges
                continue
            }
            if newer.removesAll { continue }
            var merged = olderChanges
            merged.changes.merge(newer.changes) { _, newest in newest }
            accounts[account] = merged
        }
        count = accounts.values.reduce(0) { $0 + $1.changeCount }
    }
}
