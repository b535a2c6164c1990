import HTTPDNSCore
import Synchronization

/// What is attached to the service after it is built and read while it serves: readiness, the
/// store's health, replication, the listeners' HTTP metrics and extra `/metrics` families. One
/// object, shared by the service and the handlers that read it.
final class ServiceState: Sendable {
    private let readyFlag = Atomic<Bool>(false)
    private let extraMetrics: Mutex<[@Sendable (inout MetricsEmitter) -> Void]> = Mutex([])
    private let storeHealthSource: Mutex<(@Sendable () -> PersistenceHealth)?> = Mutex(nil)
    private let replicationSource: Mutex<(any Replication)?> = Mutex(nil)
    private let httpMetricsSource: Mutex<HTTPMetrics?> = Mutex(nil)
    private let queryLogSource: Mutex<(any QueryLogReading)?> = Mutex(nil)

    /// `/readyz` answers 200 only while this is true.
    var isReady: Bool {
        get { readyFlag.load(ordering: .acquiring) }
        set { readyFlag.store(newValue, ordering: .releasing) }
    }

    func addMetricsSource(_ source: @escaping @Sendable (inout MetricsEmitter) -> Void) { extraMetrics.withLock { $0.append(source) } }
    var metricsSources: [@Sendable (inout MetricsEmitter) -> Void] { extraMetrics.withLock { $0 } }

    func setStoreHealth(_ source: @escaping @Sendable () -> PersistenceHealth) { storeHealthSource.withLock { $0 = source } }
    /// The store's state now; nil without a store.
    var storeHealth: PersistenceHealth? { storeHealthSource.withLock { $0 }?() }

    func setReplication(_ replication: any Replication) { replicationSource.withLock { $0 = replication } }
    /// Nil unless replicas share their state.
    var replication: (any Replication)? { replicationSource.withLock { $0 } }

    func attach(_ metrics: HTTPMetrics) { httpMetricsSource.withLock { $0 = metrics } }
    var httpMetrics: HTTPMetrics? { httpMetricsSource.withLock { $0 } }

    func setQueryLogReader(_ reader: any QueryLogReading) { queryLogSource.withLock { $0 = reader } }
    /// Where the query log is kept; nil without a store.
    var queryLogReader: (any QueryLogReading)? { queryLogSource.withLock { $0 } }
}
