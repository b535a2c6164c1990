import HTTPDNSCore

/// What `SQLiteStore` guards with its mutex: the pending batch, whether an early flush is
/// already on its way, and whether the store is closed (changes after close are dropped).
struct WriteBehindState: Sendable {
    private(set) var batch = PendingBatch()
    private(set) var isClosed = false
    private var earlyFlushScheduled = false
    /// A batch of this many writes is flushed at once instead of at the next tick.
    let earlyFlushThreshold: Int

    init(earlyFlushThreshold: Int) {
        self.earlyFlushThreshold = earlyFlushThreshold
    }

    /// Queues an upsert; true when the caller must schedule an early flush.
    mutating func upsert(account: String, key: CacheKey, entry: CacheEntry) -> Bool {
        guard !isClosed else { return false }
        batch.upsert(account: account, key: key, entry: entry)
        return claimEarlyFlush()
    }

    /// Queues a removal; true when the caller must schedule an early flush.
    mutating func remove(account: String, key: CacheKey) -> Bool {
        guard !isClosed else { return false }
        batch.remove(account: account, key: key)
        return claimEarlyFlush()
    }

    /// Queues an account-wide removal; true when the caller must schedule an early flush.
    mutating func removeAll(account: String) -> Bool {
        guard !isClosed else { return false }
        batch.removeAll(account: account)
        return claimEarlyFlush()
    }

    /// Hands the batch to the writer and starts an empty one.
    mutating func takeBatch() -> PendingBatch {
        earlyFlushScheduled = false
        let taken = batch
        batch = PendingBatch()
        return taken
    }

    /// Puts a batch that failed to commit back under the changes queued since.
    mutating func requeue(_ failed: PendingBatch) {
        guard !isClosed else { return }
        batch.mergeOlder(failed)
    }

    /// From now on, changes are dropped.
    mutating func close() { isClosed = true }

    private mutating func claimEarlyFlush() -> Bool {
        guard !earlyFlushScheduled, batch.count >= earlyFlushThreshold else { return false }
        earlyFlushScheduled = true
        return true
    }
}
