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
        String(decoding: answerBytes(account: account, key: key), as: UTF8.self)
    }

    /// The same key as the bytes a command sends: a replica's miss makes two (its lookup and its
    /// store), written into one buffer of the exact size with no string in between.
    public func answerBytes(account: String, key: CacheKey) -> [UInt8] {
        let family = key.family.typeName
        var bytes: [UInt8] = []
        bytes.reserveCapacity(
            prefix.utf8.count + 7 + account.utf8.count + 1 + family.utf8.count + 1 + key.host.value.utf8.count + 1
                + key.network.utf8.count + Self.lockSuffix.count)
        bytes.append(contentsOf: prefix.utf8)
        bytes.append(contentsOf: "answer:".utf8)
        bytes.append(contentsOf: account.utf8)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(contentsOf: family.utf8)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(contentsOf: key.host.value.utf8)
        if !key.network.isEmpty {
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: key.network.utf8)
        }
        return bytes
    }

    /// The lock one replica holds while it asks the upstreams for an answer: `<answer key>:lock`.
    public func answerLock(account: String, key: CacheKey) -> [UInt8] { Self.lock(ofAnswer: answerBytes(account: account, key: key)) }

    /// The lock key of an answer key (`answerBytes(account:key:)`).
    public static func lock(ofAnswer answerKey: [UInt8]) -> [UInt8] { answerKey + lockSuffix }

    private static let lockSuffix = Array(":lock".utf8)
}
