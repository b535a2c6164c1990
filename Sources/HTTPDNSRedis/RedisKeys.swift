import HTTPDNSCore

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
