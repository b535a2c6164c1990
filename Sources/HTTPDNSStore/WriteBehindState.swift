import HTTPDNSCore

/// What `SQLiteStore` guards with its mutex: the pending batch, whether an early flush is
/// already on its way, whether the store is closed (changes after close are dropped), and the
/// queue's bound.
///
/// The queue is bounded: queued plus in-flight changes stay at most `maxPendingChanges`. A
/// change to a key already queued replaces it (no growth); a change to a new key beyond the bound
/// is dropped and counted, and its account is marked `incomplete`: the cache in memory may then
/// hold answers that are not on disk, so no flush may call anything durable until the account's
/// rows are rewritten from scratch (`removeAll`, e.g. a flush of its cache) or the service
/// restarts (the warm load makes memory match the file again). An account-wide delete is never
/// dropped: it shrinks the queue.
struct WriteBehindState: Sendable {
    /// What queuing a change did.
    struct Queued: Sendable, Equatable {
        /// The caller must schedule an early flush.
        var scheduleEarlyFlush = false
        /// The change was dropped (the queue is full).
        var dropped = false
        /// This drop made its account incomplete (the first since it was last complete): log it.
        var accountBecameIncomplete = false
    }

    private(set) var batch = PendingBatch()
    private(set) var isClosed = false
    private var earlyFlushScheduled = false
    /// Changes taken by the writer and not yet committed (they count against the bound).
    private(set) var inFlight = 0
    /// A batch of this many writes is flushed at once instead of at the next tick.
    let earlyFlushThreshold: Int
    /// Queued plus in-flight changes at most; beyond, changes to new keys are dropped.
    let maxPendingChanges: Int
    /// Changes dropped so far because the queue was full.
    private(set) var droppedWrites = 0
    /// Accounts with a dropped change not yet made moot by an account-wide delete.
    private(set) var incompleteAccounts: Set<String> = []

    init(earlyFlushThreshold: Int, maxPendingChanges: Int = .max) {
        self.earlyFlushThreshold = earlyFlushThreshold
        self.maxPendingChanges = max(1, maxPendingChanges)
    }

    /// Changes waiting, queued or being committed.
    var pending: Int { batch.count + inFlight }

    /// Queues an upsert, unless the queue is full.
    mutating func upsert(account: String, key: CacheKey, entry: CacheEntry) -> Queued {
        guard !isClosed else { return Queued() }
        guard admits(account: account, key: key) else { return drop(account) }
        batch.upsert(account: account, key: key, entry: entry)
        return Queued(scheduleEarlyFlush: claimEarlyFlush())
    }

    /// Queues a removal, unless the queue is full.
    mutating func remove(account: String, key: CacheKey) -> Queued {
        guard !isClosed else { return Queued() }
        guard admits(account: account, key: key) else { return drop(account) }
        batch.remove(account: account, key: key)
        return Queued(scheduleEarlyFlush: claimEarlyFlush())
    }

    /// Queues an account-wide removal (always: it replaces the account's queued changes with one).
    /// The account's rows on disk will then match its cache again: it is no longer incomplete.
    mutating func removeAll(account: String) -> Queued {
        guard !isClosed else { return Queued() }
        batch.removeAll(account: account)
        incompleteAccounts.remove(account)
        return Queued(scheduleEarlyFlush: claimEarlyFlush())
    }

    /// Hands the batch to the writer and starts an empty one.
    mutating func takeBatch() -> PendingBatch {
        earlyFlushScheduled = false
        let taken = batch
        batch = PendingBatch()
        inFlight = taken.count
        return taken
    }

    /// The batch the writer took is committed.
    mutating func committed() { inFlight = 0 }

    /// Puts a batch that failed to commit back under the changes queued since (also once closed,
    /// so that `close()` can count what it could not commit).
    mutating func requeue(_ failed: PendingBatch) {
        inFlight = 0
        batch.mergeOlder(failed)
    }

    /// From now on, changes are dropped.
    mutating func close() { isClosed = true }

    private func admits(account: String, key: CacheKey) -> Bool {
        pending < maxPendingChanges || batch.holds(account: account, key: key)
    }

    private mutating func drop(_ account: String) -> Queued {
        droppedWrites += 1
        return Queued(dropped: true, accountBecameIncomplete: incompleteAccounts.insert(account).inserted)
    }

    private mutating func claimEarlyFlush() -> Bool {
        guard !earlyFlushScheduled, batch.count >= earlyFlushThreshold else { return false }
        earlyFlushScheduled = true
        return true
    }
}
