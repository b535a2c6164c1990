import HTTPDNSCore
import Synchronization

/// The process's Redis: the URL, key prefix and timeout of the service configuration, one
/// ``RedisConnection`` per purpose (created on first use), and the metrics they all record.
/// Built once in the composition root when `redis` is configured; without it nothing exists.
public final class RedisClient: Sendable {
    public let url: RedisURL
    public let keys: RedisKeys
    public let timeoutMilliseconds: Int
    public let metrics = RedisMetrics()
    private let connections = Mutex<[String: RedisConnection]>([:])

    public init(url: RedisURL, prefix: String, timeoutMilliseconds: Int) {
        self.url = url
        self.keys = RedisKeys(prefix: prefix)
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// The connection of `purpose` (`answers`, `accounts`, `invalidation`, ...), connecting on first use.
    /// - Parameter onStateChange: used only by the call that creates the connection.
    public func connection(_ purpose: String, onStateChange: (@Sendable (Bool) -> Void)? = nil) -> RedisConnection {
        connections.withLock { connections in
            if let existing = connections[purpose] { return existing }
            let created = RedisConnection(
                options: RedisConnection.Options(url: url, purpose: purpose, timeoutMilliseconds: timeoutMilliseconds),
                metrics: metrics, onStateChange: onStateChange)
            connections[purpose] = created
            return created
        }
    }

    /// Shuts every connection down (at exit).
    public func shutdown() {
        let all = connections.withLock { Array($0.values) }
        for connection in all { connection.shutdown() }
    }
}
