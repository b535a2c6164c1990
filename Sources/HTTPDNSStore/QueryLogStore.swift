import Dispatch
import HTTPDNSCore
import Synchronization

/// The query log's database: a serial queue of its own drains `QueryLogQueue` every
/// `flushInterval` seconds into the table `query_log` (one transaction per drain) and deletes
/// the entries whose retention ended; `read` pages through an account's entries on the same
/// queue. Nothing here runs on a request thread. The file is the store's with `.querylog`
/// after its name (`<database>.querylog`), so entries survive a restart while the cache's file
/// keeps its schema and its damaged-file handling to itself.
public final class QueryLogStore: QueryLogReading, @unchecked Sendable {
    public let path: String
    private let queue: DispatchQueue
    private let timer: DispatchSourceTimer
    private let entries: QueryLogQueue
    private let clock: any WallClock
    /// Where each drained batch goes besides the file (the dnstap stream), nil for nowhere.
    private let tap: (any QueryLogTap)?
    /// Only touched on `queue`; nil once closed.
    private var writer: QueryLogWriter?
    private let writeErrorsCounter = Atomic<Int>(0)
    private let deletedCounter = Atomic<Int>(0)
    /// Whether the last failure was logged (one line per change of state).
    private var failing = false

    /// Opens (creates) the file at `path` and starts draining `entries` every `flushInterval`
    /// seconds, into the file and to `tap`.
    public init(
        path: String, entries: QueryLogQueue, flushInterval: Double = 1, clock: any WallClock = SystemClock(),
        tap: (any QueryLogTap)? = nil
    ) throws(StoreError) {
        self.path = path
        self.entries = entries
        self.clock = clock
        self.tap = tap
        let queue = DispatchQueue(label: "httpdnsd.querylog.writer", qos: .utility)
        let opened = queue.sync { Result { () throws(StoreError) in try QueryLogWriter(path: path) } }
        writer = try opened.get()
        self.queue = queue
        timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = max(0.001, flushInterval)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(Int(min(100, interval * 100))))
        timer.setEventHandler { [weak self] in self?.flushOnQueue() }
        timer.resume()
    }

    deinit { close() }

    /// Failed inserts and deletions so far (the entries of a failed insert are lost).
    public var writeErrors: Int { writeErrorsCounter.load(ordering: .relaxed) }
    /// Entries deleted at the end of their retention so far.
    public var expiredDeleted: Int { deletedCounter.load(ordering: .relaxed) }

    /// Writes what is queued and deletes what expired, now; `completion` runs on the queue after.
    public func flush(completion: @escaping @Sendable () -> Void = {}) {
        queue.async {
            self.flushOnQueue()
            completion()
        }
    }

    public func read(_ query: QueryLogQuery, completion: @escaping @Sendable (Result<QueryLogPage, QueryLogReadError>) -> Void) {
        queue.async {
            guard let writer = self.writer else {
                completion(.failure(QueryLogReadError("the query log is closed")))
                return
            }
            do {
                completion(.success(try writer.page(query, now: self.clock.now())))
            } catch {
                completion(.failure(QueryLogReadError("\(error)")))
            }
        }
    }

    /// Writes what is queued and closes the file. Entries logged after it are not written.
    public func close() {
        queue.sync {
            guard writer != nil else { return }
            timer.cancel()
            flushOnQueue()
            writer?.close()
            writer = nil
        }
    }

    private func flushOnQueue() {
        guard let writer else { return }
        // `drain` decodes the records and masks their clients here, off the request threads,
        // before anything is written.
        let batch = entries.drain()
        if !batch.isEmpty { tap?.tap(batch) }
        do {
            if !batch.isEmpty {
                try writer.insert(batch)
                entries.noteWritten(batch.count)
            }
            let deleted = try writer.deleteExpired(now: clock.now())
            if deleted > 0 { deletedCounter.add(deleted, ordering: .relaxed) }
            if failing {
                failing = false
                Log.info("query log: writing to '\(path)' works again")
            }
        } catch {
            writeErrorsCounter.add(1, ordering: .relaxed)
            if !failing {
                failing = true
                Log.error("query log: writing to '\(path)' failed, \(batch.count) entries lost: \(error)")
            }
        }
    }
}
