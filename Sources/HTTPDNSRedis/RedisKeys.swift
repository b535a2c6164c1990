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
    /// Built in one buffer sized first: a replica's miss makes two (its lookup and its store),
    /// and each `+` of the parts made and copied a string of its own.
    public func answer(account: String, key: CacheKey) -> String {
        let family = key.family.typeName
        var text = ""
        text.reserveCapacity(
            prefix.utf8.count + 7 + account.utf8.count + 1 + family.utf8.count + 1 + key.host.value.utf8.count + 1
                + key.network.utf8.count)
        text += prefix
        text += "answer:"
        text += account
        text += ":"
        text += family
        text += ":"
        text += key.host.value
        if !key.network.isEmpty {
            text += ":"
            text += key.network
        }
        return text
    }

    /// The lock one replica holds while it asks the upstreams for an answer: `<answer key>:lock`.
    public func answerLock(account: String, key: CacheKey) -> String { Self.lock(ofAnswer: answer(account: account, key: key)) }

    /// The lock key of an answer key (`answer(account:key:)`).
    public static func lock(ofAnswer answerKey: String) -> String { answerKey + ":lock" }
}
