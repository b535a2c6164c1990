import HTTPDNSServer
import HTTPDNSStore

#if canImport(Glibc)
    import Glibc
#endif

/// The store's counters for `/metrics`.
enum StoreMetrics {
    static let writes = MetricDescriptor(
        "httpdns_store_writes_total", .counter, help: "Cache and account changes committed to SQLite.")
    static let flushes = MetricDescriptor("httpdns_store_flushes_total", .counter, help: "Write-behind transactions committed.")
    static let writeErrors = MetricDescriptor("httpdns_store_write_errors_total", .counter, help: "Failed SQLite writes.")
    static let pendingChanges = MetricDescriptor(
        "httpdns_store_pending_changes", .gauge,
        help: "Changes waiting in the write-behind queue (being committed included); at most storeMaxPendingChanges.")
    static let droppedWrites = MetricDescriptor(
        "httpdns_store_dropped_writes_total", .counter,
        help:
            "Cache changes dropped because the write-behind queue was full (storeMaxPendingChanges); preloads are not acknowledged as durable until the account's cache is flushed or the service restarts."
    )
    static let damagedFiles = MetricDescriptor(
        "httpdns_store_damaged_files_total", .counter,
        help:
            "Database files SQLite reported damaged, moved aside to <db>.corrupt-<time> (kept) and replaced by a new one, at start-up or while running."
    )
    static let healthy = MetricDescriptor(
        "httpdns_store_healthy", .gauge, help: "1 while SQLite writes succeed, 0 while they fail and are retried (the cache still serves).")
    static let databaseBytes = MetricDescriptor(
        "httpdns_store_database_bytes", .gauge, help: "Size of the SQLite database file and its write-ahead log.")

    static func emit(_ store: SQLiteStore, into out: inout MetricsEmitter) {
        out.sample(writes, [], UInt64(store.writesCommitted))
        out.sample(flushes, [], UInt64(store.flushes))
        out.sample(writeErrors, [], UInt64(store.writeErrors))
        out.sample(pendingChanges, [], UInt64(store.pendingChanges))
        out.sample(droppedWrites, [], UInt64(store.droppedWrites))
        out.sample(damagedFiles, [], UInt64(store.damagedFilesSetAside))
        out.sample(healthy, [], store.health.healthy ? 1 : 0)
        out.declare(databaseBytes)
        if let bytes = databaseBytes(store.path) { out.sample(databaseBytes, [], bytes) }
    }

    /// The bytes of the database file plus its `-wal` file (absent when checkpointed away); nil
    /// when the database file cannot be read (the family is then empty).
    static func databaseBytes(_ path: String) -> UInt64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        var wal = stat()
        let walBytes = stat(path + "-wal", &wal) == 0 ? UInt64(wal.st_size) : 0
        return UInt64(info.st_size) + walBytes
    }
}
