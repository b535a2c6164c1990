import Dispatch
import HTTPDNSCore
import Synchronization

/// The service's SQLite database: write-behind persistence of the answer cache, durable runtime
/// accounts, and the warm load at start-up.
///
/// One connection (`SQLITE_OPEN_NOMUTEX`, WAL, `synchronous=NORMAL`) lives on a serial writer
/// queue the store owns; nothing else touches it.
/// - Cache changes (`upsert`, `remove`, `removeAll`) only go into an in-memory batch under a
///   mutex, coalesced by key (the last change wins), and return at once: safe on the HTTP hot
///   path. The writer commits the batch in one transaction every `flushInterval` seconds, and
///   sooner once it holds `earlyFlushThreshold` changes. A failed commit is logged to stderr,
///   counted in `writeErrors` and retried with the next flush (dropped after three failures in
///   a row).
/// - Account calls (`saveAccount`, `deleteAccount`, `loadAccounts`) and `loadCache` wait for
///   the writer queue; account writes are committed with `synchronous=FULL` before they return.
/// - `close()` flushes and closes; call it at shutdown. Changes queued after it are dropped.
public final class SQLiteStore: CachePersistence, AccountPersistence, @unchecked Sendable {
    /// The database file.
    public let path: String

    private let writerQueue: DispatchQueue
    private let writerQueueKey = DispatchSpecificKey<Bool>()
    private let timer: DispatchSourceTimer
    /// Only touched on `writerQueue`; nil once closed.
    private var writer: StoreWriter?
    /// Only touched on `writerQueue`: commits that failed in a row.
    private var consecutiveFailures = 0
    private let locked_state: Mutex<WriteBehindState>

    private let writesCommittedCounter = Atomic<Int>(0)
    private let flushesCounter = Atomic<Int>(0)
    private let writeErrorsCounter = Atomic<Int>(0)
    private let droppedChangesCounter = Atomic<Int>(0)
    private let lastFlushNanoseconds = Atomic<Int>(0)
    private let skippedInvalidRowsCounter = Atomic<Int>(0)
    private let discardedExpiredRowsCounter = Atomic<Int>(0)

    /// Opens (creates) the database at `path`, migrates its schema and starts the writer.
    /// - Parameters:
    ///   - flushInterval: seconds between write-behind commits (default 1).
    ///   - earlyFlushThreshold: pending changes that trigger a commit before the next tick.
    /// - Throws: `StoreError` naming `path` when it cannot be opened or is not a database.
    public init(path: String, flushInterval: Double = 1, earlyFlushThreshold: Int = 5_000) throws(StoreError) {
        self.path = path
        let queue = DispatchQueue(label: "httpdnsd.store.writer", qos: .utility)
        queue.setSpecific(key: writerQueueKey, value: true)
        let opened = queue.sync { () -> Result<StoreWriter, StoreError> in
            Result { () throws(StoreError) -> StoreWriter in try StoreWriter(path: path) }
        }
        writer = try opened.get()
        writerQueue = queue
        locked_state = Mutex(WriteBehindState(earlyFlushThreshold: max(1, earlyFlushThreshold)))
        timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = max(0.001, flushInterval)
        timer.schedule(
            deadline: .now() + interval, repeating: interval,
            leeway: .milliseconds(Int(min(100, interval * 100))))
        timer.setEventHandler { [weak self] in self?.flushOnWriter() }
        timer.resume()
    }

    deinit { close() }

    // MARK: Counters (for /metrics)

    /// Writes committed so far: cache row upserts and deletes, account-wide cache deletes, and
    /// account saves and deletions.
    public var writesCommitted: Int { writesCommittedCounter.load(ordering: .relaxed) }
    /// Write-behind transactions committed so far.
    public var flushes: Int { flushesCounter.load(ordering: .relaxed) }
    /// Failed commits (cache batches and account writes) so far.
    public var writeErrors: Int { writeErrorsCounter.load(ordering: .relaxed) }
    /// Cache changes given up after repeated failed commits.
    public var droppedChanges: Int { droppedChangesCounter.load(ordering: .relaxed) }
    /// How long the last write-behind commit took, in seconds.
    public var lastFlushDurationSeconds: Double {
        Double(lastFlushNanoseconds.load(ordering: .relaxed)) / 1_000_000_000
    }
    /// Rows skipped by warm loads because their host or family no longer validates.
    public var skippedInvalidRows: Int { skippedInvalidRowsCounter.load(ordering: .relaxed) }
    /// Expired rows deleted by warm loads.
    public var discardedExpiredRows: Int { discardedExpiredRowsCounter.load(ordering: .relaxed) }
    /// Cache changes queued and not yet committed.
    public var pendingChanges: Int { locked_state.withLock { $0.batch.count } }

    // MARK: CachePersistence (hot path: no I/O, no waiting)

    /// Queues the entry for writing; returns at once.
    public func upsert(account: String, key: CacheKey, entry: CacheEntry) {
        let early = locked_state.withLock { $0.upsert(account: account, key: key, entry: entry) }
        if early { scheduleEarlyFlush() }
    }

    /// Queues the key's deletion; returns at once.
    public func remove(account: String, key: CacheKey) {
        let early = locked_state.withLock { $0.remove(account: account, key: key) }
        if early { scheduleEarlyFlush() }
    }

    /// Queues the deletion of all the account's entries; returns at once.
    public func removeAll(account: String) {
        let early = locked_state.withLock { $0.removeAll(account: account) }
        if early { scheduleEarlyFlush() }
    }

    /// Commits everything queued before this call, then calls `completion` on the writer queue
    /// (also when the commit failed: see `writeErrors`, or when the store is closed). Keep the
    /// completion short (resume a continuation, signal a semaphore); store calls made from it
    /// run inline on the writer queue.
    public func flush(completion: @escaping @Sendable () -> Void) {
        writerQueue.async {
            self.flushOnWriter()
            completion()
        }
    }

    // MARK: AccountPersistence (synchronous, durable on return)

    /// Stores the account's JSON; committed (fsync'd) when this returns.
    public func saveAccount(id: String, json: String) throws(StoreError) {
        try writeAccount(id: id, json: json, deleted: false)
    }

    /// Records that the account was deleted; committed (fsync'd) when this returns.
    public func deleteAccount(id: String) throws(StoreError) {
        try writeAccount(id: id, json: nil, deleted: true)
    }

    /// Runtime accounts: id → JSON, or nil for accounts deleted at run time.
    public func loadAccounts() throws(StoreError) -> [String: String?] {
        try onWriter { () throws(StoreError) -> [String: String?] in
            try self.openWriter().loadAccounts()
        }
    }

    // MARK: Warm load

    /// Reads the account's persisted cache (after committing anything queued): entries not yet
    /// expired at `now`, plus, when `keepExpired`, entries expired for at most
    /// `discardExpiredOlderThan` seconds. The other expired rows are deleted from the file, as are
    /// rows whose host no longer validates as a `HostName` (counted in `skippedInvalidRows`).
    /// One transaction, one prepared statement; runs on the writer queue and waits for it.
    public func loadCache(
        account: String, now: Timestamp, discardExpiredOlderThan: Double, keepExpired: Bool
    ) throws(StoreError) -> [(CacheKey, CacheEntry)] {
        let result = try onWriter { () throws(StoreError) -> WarmLoadResult in
            let writer = try self.openWriter()
            self.flushOnWriter()
            return try writer.loadCache(
                account: account, now: now, window: max(0, discardExpiredOlderThan), keepExpired: keepExpired)
        }
        skippedInvalidRowsCounter.add(result.skippedInvalid, ordering: .relaxed)
        discardedExpiredRowsCounter.add(result.discardedExpired, ordering: .relaxed)
        if result.skippedInvalid > 0 {
            Log.error("store: warm load of account '\(account)' skipped \(result.skippedInvalid) rows with an invalid host")
        }
        return result.entries
    }

    /// The accounts that have persisted cache entries (after committing anything queued), e.g.
    /// to `removeAll` those of accounts that no longer exist. Waits for the writer queue.
    public func cachedAccounts() throws(StoreError) -> [String] {
        try onWriter { () throws(StoreError) -> [String] in
            let writer = try self.openWriter()
            self.flushOnWriter()
            return try writer.cachedAccounts().sorted()
        }
    }

    // MARK: Lifecycle

    /// Stops the timer, commits what is queued and closes the connection. Idempotent; later
    /// cache changes are dropped and account calls throw `StoreError.Code.closed`.
    public func close() {
        onWriter {
            guard let writer = self.writer else { return }
            self.timer.cancel()
            self.locked_state.withLock { $0.close() }
            self.flushOnWriter()
            writer.close()
            self.writer = nil
        }
    }

    // MARK: Writer queue

    /// Runs `body` on the writer queue and waits; inline when already there.
    private func onWriter<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        let result = onWriter { () -> Result<T, StoreError> in Result(catching: body) }
        return try result.get()
    }

    private func onWriter<T>(_ body: () -> T) -> T {
        if DispatchQueue.getSpecific(key: writerQueueKey) == true { return body() }
        return writerQueue.sync(execute: body)
    }

    /// The open writer; throws when closed. Writer queue only.
    private func openWriter() throws(StoreError) -> StoreWriter {
        guard let writer else { throw StoreError(code: .closed, message: "database '\(path)' is closed") }
        return writer
    }

    private func scheduleEarlyFlush() {
        writerQueue.async { self.flushOnWriter() }
    }

    private func writeAccount(id: String, json: String?, deleted: Bool) throws(StoreError) {
        let now = SystemClock().now()
        do {
            try onWriter { () throws(StoreError) in
                try self.openWriter().saveAccount(id: id, json: json, deleted: deleted, now: now)
            }
            writesCommittedCounter.add(1, ordering: .relaxed)
        } catch {
            if error.code != .closed {
                writeErrorsCounter.add(1, ordering: .relaxed)
                Log.error("store: saving account '\(id)' failed: \(error)")
            }
            throw error
        }
    }

    /// Commits the pending batch. Writer queue only.
    private func flushOnWriter() {
        let batch = locked_state.withLock { $0.takeBatch() }
        guard !batch.isEmpty, let writer else { return }
        let start = ContinuousClock.now
        do {
            let written = try writer.apply(batch)
            let elapsed = start.duration(to: .now).components
            lastFlushNanoseconds.store(
                Int(elapsed.seconds) * 1_000_000_000 + Int(elapsed.attoseconds / 1_000_000_000), ordering: .relaxed)
            writesCommittedCounter.add(written, ordering: .relaxed)
            flushesCounter.add(1, ordering: .relaxed)
            consecutiveFailures = 0
        } catch {
            writeErrorsCounter.add(1, ordering: .relaxed)
            consecutiveFailures += 1
            if consecutiveFailures < 3 {
                Log.error("store: committing \(batch.count) cache changes failed, will retry: \(error)")
                locked_state.withLock { $0.requeue(batch) }
            } else {
                Log.error("store: committing \(batch.count) cache changes failed \(consecutiveFailures) times, dropping them: \(error)")
                droppedChangesCounter.add(batch.count, ordering: .relaxed)
                consecutiveFailures = 0
            }
        }
    }
}
