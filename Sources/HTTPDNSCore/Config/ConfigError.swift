/// A configuration that cannot be used. `key` names the offending key as the operator wrote it
/// (`accounts.shop.maxCacheTTL`, `HTTPDNS_LISTEN`, `--threads`).
public struct ConfigError: Error, Sendable, CustomStringConvertible, Equatable {
    public var key: String
    public var message: String

    public init(key: String, _ message: String) {
        self.key = key
        self.message = message
    }

    public var description: String { "\(key): \(message)" }
}
