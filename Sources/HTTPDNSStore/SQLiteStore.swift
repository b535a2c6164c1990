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
///   sooner once it holds `earlyFlushThreshold` changes.
/// - A failed commit puts its changes back under the newer ones and marks the store unhealthy
///   (`health`; one log line per change of state); scheduled commits then wait 1, 2, 4 ... 30 s
///   between attempts, and the store becomes healthy by itself with the first one that commits.
///   Nothing is dropped while the store is open. When SQLite reports the file damaged
///   (`SQLITE_CORRUPT`, `SQLITE_NOTADB`), the store sets the file aside (`<path>.corrupt-<time>`)
///   and starts a new one holding the accounts read from the old (the cache starts cold). A file
///   found damaged when the store opens is set aside the same way, without its accounts, which
///   cannot be read (`damagedAtStartUp`); `health.damagedFile` names the last one set aside.
/// - `flush` tries a commit at once (whatever the backoff) and says whether everything queued
///   before it is durable. Account writes (`saveAccount`, `deleteAccount`) run on the writer
///   queue and complete there once committed with `synchronous=FULL`; `loadAccounts` and
///   `loadCache` wait for the writer queue (start-up).
/// - `close()` flushes and closes; call it at shutdown. Changes queued after it are dropped.
public final class SQLiteStore: CachePersistence, AccountPersistence, @unchecked Sendable {
    /// The database file.
    public let path: String

    private let writerQueue: DispatchQueue
    private let writerQueueKey = DispatchSpecificKey<Bool>()
    private let timer: DispatchSourceTimer
    /// Only touched on `writerQueue`; nil once closed.
    private var writer: StoreWriter?
    private let locked_state: Mutex<WriteBehindState>
    /// Written on `writerQueue`, read by `health` from any thread.
    private let locked_health = Mutex(StoreHealth())

    private let writesCommittedCounter = Atomic<Int>(0)
    private let flushesCounter = Atomic<Int>(0)
    private let writeErrorsCounter = Atomic<Int>(0)
    private let droppedChangesCounter = Atomic<Int>(0)
    private let lastFlushNanoseconds = Atomic<Int>(0)
    private let skippedInvalidRowsCounter = Atomic<Int>(0)
    private let discardedExpiredRowsCounter = Atomic<Int>(0)
    private let damagedFilesCounter = Atomic<Int>(0)
    /// The last file set aside as damaged; written on `writerQueue` (or in `init`).
    private let locked_damagedFile = Mutex<DamagedFile?>(nil)

    /// Opens (creates) the database at `path`, migrates its schema and starts the writer.
    /// - Parameters:
    ///   - flushInterval: seconds between write-behind commits (default 1).
    ///   - earlyFlushThreshold: pending changes that trigger a commit before the next tick.
    ///   - maxPendingChanges: the write-behind queue's bound (queued and being committed); beyond
    ///     it, cache changes to keys not already queued are dropped and counted (`droppedWrites`).
    ///     The service passes `storeMaxPendingChanges`; the default (no bound) is for tests.
    /// A file SQLite reports damaged is moved aside and a new one made (`damagedAtStartUp`).
    /// - Throws: `StoreError` naming `path` when it cannot be opened, or its new file made.
    public init(
        path: String, flushInterval: Double = 1, earlyFlushThreshold: Int = 5_000,
        maxPendingChanges: Int = .max
    ) throws(StoreError) {
        self.path = path
        let queue = DispatchQueue(label: "httpdnsd.store.writer", qos: .utility)
        queue.setSpecific(key: writerQueueKey, value: true)
        let opened = queue.sync { () -> Result<(StoreWriter, DamagedFile?), StoreError> in
            Result { () throws(StoreError) in try StoreWriter.openAtStartUp(path: path, now: SystemClock().now()) }
        }
        let (writer, damaged) = try opened.get()
        self.writer = writer
        damagedAtStartUp = damaged
        if let damaged {
            locked_damagedFile.withLock { $0 = damaged }
            damagedFilesCounter.add(1, ordering: .relaxed)
        }
        writerQueue = queue
        locked_state = Mutex(
            WriteBehindState(
                earlyFlushThreshold: max(1, earlyFlushThreshold), maxPendingChanges: maxPendingChanges))
        timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = max(0.001, flushInterval)
        timer.schedule(
            deadline: .now() + interval, repeating: interval,
            leeway: .milliseconds(Int(min(100, interval * 100))))
        timer.setEventHandler { [weak self] in _ = self?.flushOnWriter(scheduled: true) }
        timer.resume()
    }

    deinit { close() }

    /// The file found damaged and moved aside when the store opened, if it was: the service
    /// started without the accounts only that file held (the caller says so in its log).
    public let damagedAtStartUp: DamagedFile?

    // MARK: Counters (for /metrics)

    /// Writes committed so far: cache row upserts and deletes, account-wide cache deletes, and
    /// account saves and deletions.
    public var writesCommitted: Int { writesCommittedCounter.load(ordering: .relaxed) }
    /// Write-behind transactions committed so far.
    public var flushes: Int { flushesCounter.load(ordering: .relaxed) }
    /// Failed commits (cache batches and account writes) so far.
    public var writeErrors: Int { writeErrorsCounter.load(ordering: .relaxed) }
    /// Cache changes lost: queued but not committed when the store closed.
    public var droppedChanges: Int { droppedChangesCounter.load(ordering: .relaxed) }
    /// How long the last write-behind commit took, in seconds.
    public var lastFlushDurationSeconds: Double {
        Double(lastFlushNanoseconds.load(ordering: .relaxed)) / 1_000_000_000
    }
    /// Rows skipped by warm loads because their host or family no longer validates.
    public var skippedInvalidRows: Int { skippedInvalidRowsCounter.load(ordering: .relaxed) }
    /// Expired rows deleted by warm loads.
    public var discardedExpiredRows: Int { discardedExpiredRowsCounter.load(ordering: .relaxed) }
    /// Database files found damaged and moved aside so far (at start-up and while running).
    public var damagedFilesSetAside: Int { damagedFilesCounter.load(ordering: .relaxed) }
    /// Cache changes queued and not yet committed (being committed included).
    public var pendingChanges: Int { locked_state.withLock { $0.pending } }
    /// Cache changes dropped because the write-behind queue was full (the store failing or
    /// slower than the changes for long enough to fill `maxPendingChanges`).
    public var droppedWrites: Int { locked_state.withLock { $0.droppedWrites } }
    /// Accounts whose cache in memory may hold answers not on disk (a change of theirs was
    /// dropped since their cache was last flushed): no flush is durable while there is one.
    public var incompleteAccounts: [String] { locked_state.withLock { $0.incompleteAccounts.sorted() } }

    /// Whether writes succeed now, and why not (for `/readyz` and `/metrics`).
    public var health: PersistenceHealth {
        let state = locked_health.withLock { $0 }
        return PersistenceHealth(
            healthy: state.isHealthy, pendingChanges: pendingChanges, lastError: state.reason,
            failingSince: state.failingSince, damagedFile: locked_damagedFile.withLock { $0 })
    }

    // MARK: CachePersistence (hot path: no I/O, no waiting)

    /// Queues the entry for writing (dropped when the queue is full); returns at once.
    public func upsert(account: String, key: CacheKey, entry: CacheEntry) {
        queued(locked_state.withLock { $0.upsert(account: account, key: key, entry: entry) }, account: account)
    }

    /// Queues the key's deletion (dropped when the queue is full); returns at once.
    public func remove(account: String, key: CacheKey) {
        queued(locked_state.withLock { $0.remove(account: account, key: key) }, account: account)
    }

    /// Queues the deletion of all the account's entries (never dropped); returns at once.
    public func removeAll(account: String) {
        queued(locked_state.withLock { $0.removeAll(account: account) }, account: account)
    }

    private func queued(_ outcome: WriteBehindState.Queued, account: String) {
        if outcome.scheduleEarlyFlush { scheduleEarlyFlush() }
        if outcome.accountBecameIncomplete {
            Log.error(
                "store: the write-behind queue is full (storeMaxPendingChanges): new cache changes of account '\(account)' are dropped (httpdns_store_dropped_writes_total); until its cache is flushed or the service restarts, preloads are not acknowledged as durable"
            )
        }
    }

    /// Tries to commit everything queued before this call (at once, whatever the backoff), then
    /// calls `completion` on the writer queue with whether it is all durable: `.failed` when the
    /// commit failed (the changes stay queued and are retried) or the store is closed. Keep the
    /// completion short (resume a continuation, set a reply); store calls made from it run
    /// inline on the writer queue.
    public func flush(completion: @escaping @Sendable (FlushOutcome) -> Void) {
        writerQueue.async {
            completion(self.flushOnWriter(scheduled: false))
        }
    }

    // MARK: AccountPersistence (on the writer queue, durable on completion)

    /// Stores the account's JSON on the writer queue; `completion` runs there once the row is
    /// committed and synced (`synchronous=FULL`), or with an `AccountWriteFailure` (its `detail`
    /// the `StoreError`; `retryAfterSeconds` the store's current backoff).
    public func saveAccount(id: String, json: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        writeAccount(id: id, json: json, deleted: false, completion: completion)
    }

    /// Records on the writer queue that the account was deleted; completes like `saveAccount`.
    public func deleteAccount(id: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        writeAccount(id: id, json: nil, deleted: true, completion: completion)
    }

    /// Runtime accounts: id → JSON, or nil for accounts deleted at run time.
    public func loadAccounts() throws(StoreError) -> [String: String?] {
        try onWriter { () throws(StoreError) -> [String: String?] in
            try self.openWriter().loadAccounts()
        }
    }

    // MARK: Warm load

    /// Reads the account's persisted cache (after committing anything queued) and hands the
    /// entries over as they are read: entries not yet expired at `now`, plus, when
    /// `keepExpired`, entries expired for at most `discardExpiredOlderThan` seconds. The other
    /// expired rows are deleted from the file, as are rows whose host no longer validates as a
    /// `HostName` (counted in `skippedInvalidRows`). One transaction; runs on the writer queue
    /// and waits for it. `deliver` gets the entries there in batches of up to `batchSize`, in
    /// the rows' order, so that a caller can put a batch into the cache while the next is read
    /// and no array of every entry is built. When the file is found damaged, it is set aside and
    /// the outcome says so (`WarmLoadOutcome.setAside`): what was delivered must be dropped.
    public func loadCache(
        account: String, now: Timestamp, discardExpiredOlderThan: Double, keepExpired: Bool, batchSize: Int = 16_384,
        deliver: (consuming [(CacheKey, CacheEntry)]) -> Void
    ) throws(StoreError) -> WarmLoadOutcome {
        var setAside = false
        let result = try onWriter { () throws(StoreError) -> WarmLoadResult in
            // Flush first: a commit that finds the file damaged replaces the writer.
            _ = self.flushOnWriter(scheduled: false)
            let writer = try self.openWriter()
            do throws(StoreError) {
                return try writer.loadCache(
                    account: account, now: now, window: max(0, discardExpiredOlderThan), keepExpired: keepExpired,
                    batchSize: max(1, batchSize), deliver: deliver)
            } catch  where error.isDamage {
                // A damaged cache table is not read around: the file is set aside, the cache starts cold.
                guard self.setDamagedFileAside(after: error) else { throw error }
                setAside = true
                return WarmLoadResult()
            }
        }
        skippedInvalidRowsCounter.add(result.skippedInvalid, ordering: .relaxed)
        discardedExpiredRowsCounter.add(result.discardedExpired, ordering: .relaxed)
        if result.skippedInvalid > 0 {
            Log.error("store: warm load of account '\(account)' skipped \(result.skippedInvalid) rows with an invalid host")
        }
        return WarmLoadOutcome(loaded: result.loaded, setAside: setAside)
    }

    /// The accounts that have persisted cache entries (after committing anything queued), e.g.
    /// to `removeAll` those of accounts that no longer exist. Waits for the writer queue.
    public func cachedAccounts() throws(StoreError) -> [String] {
        try onWriter { () throws(StoreError) -> [String] in
            _ = self.flushOnWriter(scheduled: false)
            let writer = try self.openWriter()
            do throws(StoreError) {
                return try writer.cachedAccounts().sorted()
            } catch  where error.isDamage {
                guard self.setDamagedFileAside(after: error) else { throw error }
                return []
            }
        }
    }

    // MARK: Lifecycle

    /// Stops the timer, commits what is queued and closes the connection. Idempotent; later
    /// cache changes are dropped and account calls throw `StoreError.Code.closed`.
    public func close() {
        onWriter {
            guard self.writer != nil else { return }
            self.timer.cancel()
            self.locked_state.withLock { $0.close() }
            if case .failed(let reason) = self.flushOnWriter(scheduled: false),
                case let lost = self.locked_state.withLock({ $0.pending }), lost > 0
            {
                self.droppedChangesCounter.add(lost, ordering: .relaxed)
                Log.error("store: closing with \(lost) cache changes not committed (\(reason)): they are lost")
            }
            self.writer?.close()
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
        writerQueue.async { _ = self.flushOnWriter(scheduled: true) }
    }

    private func writeAccount(
        id: String, json: String?, deleted: Bool, completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        let now = SystemClock().now()
        writerQueue.async {
            do throws(StoreError) {
                try self.openWriter().saveAccount(id: id, json: json, deleted: deleted, now: now)
                self.writesCommittedCounter.add(1, ordering: .relaxed)
                self.logTransition(self.locked_health.withLock { $0.accountWriteSucceeded() })
                completion(.success(()))
            } catch {
                let monotonicNow = Self.monotonicSeconds()
                if error.code != .closed {
                    self.writeErrorsCounter.add(1, ordering: .relaxed)
                    Log.error("store: saving account '\(id)' failed: \(error)")
                    self.logTransition(
                        self.locked_health.withLock {
                            $0.accountWriteFailed(error, monotonicNow: monotonicNow, unixNow: now)
                        })
                }
                let retryAfter = self.locked_health.withLock { $0.retryAfterSeconds(at: monotonicNow) }
                completion(
                    .failure(
                        AccountWriteFailure(
                            reason: StoreHealth.reason(error), retryAfterSeconds: retryAfter, detail: "\(error)")))
            }
        }
    }

    /// Commits the pending batch and says whether everything queued so far is durable. Writer
    /// queue only. A `scheduled` flush (timer, early flush) waits out the backoff after a failure.
    private func flushOnWriter(scheduled: Bool) -> FlushOutcome {
        if scheduled && locked_health.withLock({ $0.isBackingOff(at: Self.monotonicSeconds()) }) {
            return .failed(reason: locked_health.withLock { $0.reason } ?? "retrying later")
        }
        let batch = locked_state.withLock { $0.takeBatch() }
        guard !batch.isEmpty else { return completeness() }
        guard let writer else {
            // Closed (the batch was taken after `close()`): nothing more is written.
            locked_state.withLock { $0.requeue(batch) }
            return .failed(reason: "\(StoreError.Code.closed)")
        }
        let start = ContinuousClock.now
        do {
            let written = try commit(batch, with: writer)
            locked_state.withLock { $0.committed() }
            let elapsed = start.duration(to: .now).components
            lastFlushNanoseconds.store(
                Int(elapsed.seconds) * 1_000_000_000 + Int(elapsed.attoseconds / 1_000_000_000), ordering: .relaxed)
            writesCommittedCounter.add(written, ordering: .relaxed)
            flushesCounter.add(1, ordering: .relaxed)
            logTransition(locked_health.withLock { $0.cacheCommitSucceeded() })
            return completeness()
        } catch {
            writeErrorsCounter.add(1, ordering: .relaxed)
            locked_state.withLock { $0.requeue(batch) }
            let transition = locked_health.withLock {
                $0.cacheCommitFailed(error, monotonicNow: Self.monotonicSeconds(), unixNow: SystemClock().now())
            }
            logTransition(transition)
            return .failed(reason: StoreHealth.reason(error))
        }
    }

    /// `.durable` unless a cache change was dropped since an account's cache was last flushed:
    /// then what the caller's answers rest on may not be on disk.
    private func completeness() -> FlushOutcome {
        let incomplete = locked_state.withLock { $0.incompleteAccounts.sorted() }
        guard let first = incomplete.first else { return .durable }
        let accounts = incomplete.count == 1 ? "account '\(first)'" : "\(incomplete.count) accounts ('\(first)', ...)"
        return .failed(reason: "queueFull (cache changes of \(accounts) were dropped while the write-behind queue was full)")
    }

    /// Applies `batch`; when the file turns out damaged, sets it aside and applies the batch to
    /// the new file once.
    private func commit(_ batch: PendingBatch, with writer: StoreWriter) throws(StoreError) -> Int {
        do throws(StoreError) {
            return try writer.apply(batch)
        } catch  where error.isDamage {
            guard setDamagedFileAside(after: error), let fresh = self.writer else { throw error }
            return try fresh.apply(batch)
        }
    }

    /// Reads the accounts from the damaged file, moves it (and its `-wal` and `-shm`) to
    /// `<path>.corrupt-<unix time>`, opens a new file and writes the accounts back. At most once
    /// per unhealthy spell; false (the store keeps failing and says so) when the accounts cannot
    /// be read or the new file cannot be made. Writer queue only.
    private func setDamagedFileAside(after damage: StoreError) -> Bool {
        guard let writer else { return false }
        let alreadyTried = locked_health.withLock { health -> Bool in
            defer { health.rebuiltThisSpell = true }
            return health.rebuiltThisSpell
        }
        guard !alreadyTried else { return false }
        let accounts: [String: String?]
        do {
            accounts = try writer.loadAccounts()
        } catch {
            Log.error(
                "store: the database '\(path)' is damaged (\(damage)) and its accounts cannot be read (\(error)); it is left as it is: move it away and restart to start a new one"
            )
            return false
        }
        writer.close()
        self.writer = nil
        do {
            let now = SystemClock().now()
            let aside = try FileMoves.moveDamaged(path, now: now)
            damagedFilesCounter.add(1, ordering: .relaxed)
            locked_damagedFile.withLock {
                $0 = DamagedFile(path: path, movedTo: aside, reason: StoreHealth.reason(damage), at: now, atStartUp: false)
            }
            let fresh = try StoreWriter(path: path)
            for (id, json) in accounts.sorted(by: { $0.key < $1.key }) {
                try fresh.saveAccount(id: id, json: json, deleted: json == nil, now: now)
            }
            self.writer = fresh
            Log.error(
                "store: the database '\(path)' was damaged (\(StoreHealth.reason(damage))): moved to '\(aside)', started a new one with the \(accounts.count) stored accounts (the persisted cache starts empty)"
            )
            return true
        } catch {
            Log.error("store: could not replace the damaged database '\(path)': \(error); writes keep failing until it is fixed")
            // Reopen what is there so that the store keeps trying (and reporting) rather than closing.
            do {
                self.writer = try StoreWriter(path: path)
            } catch {
                Log.error("store: cannot reopen '\(path)' either: \(error); cache changes stay queued in memory")
            }
            return false
        }
    }

    /// One log line per change of health.
    private func logTransition(_ transition: StoreHealth.Transition) {
        switch transition {
        case .none: break
        case .becameUnhealthy(let reason):
            Log.error(
                "store: writes to '\(path)' fail (\(reason)): degraded, answering from memory; changes stay queued and are retried with backoff (1 s up to 30 s)"
            )
        case .recovered(let failures):
            Log.info("store: writes to '\(path)' succeed again after \(failures) failed attempts; queued changes committed")
        }
    }

    private static let startInstant = ContinuousClock.now

    /// Seconds on the monotonic clock (for the backoff).
    private static func monotonicSeconds() -> Double {
        let elapsed = startInstant.duration(to: .now).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    }

    // MARK: Testing

    /// Runs `sql` on the store's own connection, on the writer queue (e.g. `PRAGMA max_page_count`
    /// to make SQLite report a full database). For tests.
    func executeOnWriter(_ sql: String) throws(StoreError) {
        try onWriter { () throws(StoreError) in try self.openWriter().connection.execute(sql) }
    }
}
