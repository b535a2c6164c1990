import HTTPDNSServer
import HTTPDNSStore

#if canImport(Glibc)
    import Glibc
#endif

/// The store's counters in the Prometheus text format.
enum StoreMetrics {
    static func render(_ store: SQLiteStore) -> String {
        MetricsExposition.family(
            "httpdns_store_writes_total", type: "counter", help: "Cache and account changes committed to SQLite.",
            samples: [(labels: "", value: UInt64(store.writesCommitted))])
            + MetricsExposition.family(
                "httpdns_store_flushes_total", type: "counter", help: "Write-behind transactions committed.",
                samples: [(labels: "", value: UInt64(store.flushes))])
            + MetricsExposition.family(
                "httpdns_store_write_errors_total", type: "counter", help: "Failed SQLite writes.",
                samples: [(labels: "", value: UInt64(store.writeErrors))])
            + MetricsExposition.family(
                "httpdns_store_pending_changes", type: "gauge",
                help: "Changes waiting in the write-behind queue (being committed included); at most storeMaxPendingChanges.",
                samples: [(labels: "", value: UInt64(store.pendingChanges))])
            + MetricsExposition.family(
                "httpdns_store_dropped_writes_total", type: "counter",
                help:
                    "Cache changes dropped because the write-behind queue was full (storeMaxPendingChanges); preloads are not acknowledged as durable until the account's cache is flushed or the service restarts.",
                samples: [(labels: "", value: UInt64(store.droppedWrites))])
            + MetricsExposition.family(
                "httpdns_store_damaged_files_total", type: "counter",
                help:
                    "Database files SQLite reported damaged, moved aside to <db>.corrupt-<time> (kept) and replaced by a new one, at start-up or while running.",
                samples: [(labels: "", value: UInt64(store.damagedFilesSetAside))])
            + MetricsExposition.family(
                "httpdns_store_healthy", type: "gauge",
                help: "1 while SQLite writes succeed, 0 while they fail and are retried (the cache still serves).",
                samples: [(labels: "", value: store.health.healthy ? 1 : 0)])
            + MetricsExposition.family(
                "httpdns_store_database_bytes", type: "gauge", help: "Size of the SQLite database file and its write-ahead log.",
                samples: databaseBytes(store.path).map { [(labels: "", value: $0)] } ?? [])
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
