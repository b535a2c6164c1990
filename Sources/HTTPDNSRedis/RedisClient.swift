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

/// Every Redis key and channel name, under the configured prefix (docs/redis.md lists them).
public struct RedisKeys: Sendable, Equatable {
    public let prefix: String

    public init(prefix: String) {
        self.prefix = prefix
    }

    /// `<prefix><suffix>`: for keys another part of the service adds (say so in docs/redis.md).
    public func key(_ suffix: String) -> String { prefix + suffix }

    /// The shared answer of one cache key of one account:
    /// `<prefix>answer:<account>:<family>:<host>[:<network>]`.
    public func answer(account: String, key: CacheKey) -> String {
        var text = prefix + "answer:" + account + ":" + key.family.typeName + ":" + key.host.value
        if !key.network.isEmpty { text += ":" + key.network }
        return text
    }

    /// The lock one replica holds while it asks the upstreams for an answer: `<answer key>:lock`.
    public func answerLock(account: String, key: CacheKey) -> String { answer(account: account, key: key) + ":lock" }
}
