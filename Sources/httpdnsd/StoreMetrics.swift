import HTTPDNSServer
import HTTPDNSStore

/// The store's counters in the Prometheus text format.
enum StoreMetrics {
    static func render(_ store: SQLiteStore) -> String {
        MetricsExposition.family("httpdns_store_writes_total", type: "counter", help: "Cache and account changes committed to SQLite.", samples: [(labels: "", value: UInt64(store.writesCommitted))])
            + MetricsExposition.family("httpdns_store_flushes_total", type: "counter", help: "Write-behind transactions committed.", samples: [(labels: "", value: UInt64(store.flushes))])
            + MetricsExposition.family("httpdns_store_write_errors_total", type: "counter", help: "Failed SQLite writes.", samples: [(labels: "", value: UInt64(store.writeErrors))])
    }
}
