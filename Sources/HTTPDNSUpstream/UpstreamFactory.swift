import HTTPDNSCore

/// Builds the resolver for an `upstreams` entry of an account, or the system-resolver fallback.
public enum UpstreamFactory {
    /// The adapter for `spec`, sharing `loop`; its `name` is `spec.description`.
    /// - `json`: ``DoHJSONClient``, signed (uid = `accountID`) when the config has both
    ///   `accessKeyId` and `accessKeySecret`.
    /// - `doh`: ``DoHWireClient``.
    /// - `httpdns`: ``HTTPDNSAPIClient`` for account `accountID`, signed when `secretKey` is set.
    public static func make(_ spec: UpstreamSpec, accountID: String, config: AccountConfig, loop: CurlEventLoop) -> any UpstreamResolver {
        switch spec.kind {
        case .json:
            DoHJSONClient(
                url: spec.url, loop: loop, name: spec.description, accountID: accountID,
                accessKeyId: config.accessKeyId, accessKeySecret: config.accessKeySecret)
        case .doh:
            DoHWireClient(url: spec.url, loop: loop, name: spec.description)
        case .httpdns:
            HTTPDNSAPIClient(url: spec.url, loop: loop, accountID: accountID, secretKey: config.secretKey, name: spec.description)
        }
    }

    /// A ``SystemResolver`` named `localdns` asking `servers` (`host:port`), or the system
    /// configuration when empty. Each call starts a thread and a c-ares channel: share the result.
    public static func makeSystemResolver(servers: [String]) -> any UpstreamResolver {
        SystemResolver(servers: servers)
    }
}
