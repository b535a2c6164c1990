import Foundation

/// How an `HTTPDNSClient` reaches its service and what it does when the service cannot answer.
public struct HTTPDNSClientConfiguration: Sendable {
    /// Base URLs of httpdnsd services (e.g. `http://127.0.0.1:8080`), tried in order; the one
    /// that answered last is tried first next time.
    public var services: [URL]
    /// The account id in `/v1/{account}/resolve`.
    public var account: String
    /// The client key that signs every request (signature v1), or nil for an open account.
    public var credentials: HTTPDNSCredentials?
    /// The account's `aesSecretKey`, or nil to send requests in clear. With a key, every
    /// request is encrypted (AES-256-GCM, docs/encryption.md) and every answer must open
    /// under it; one that does not is `HTTPDNSClientError.unverifiedReply`.
    public var encryptionKey: HTTPDNSEncryptionKey?
    /// Which address families to ask for.
    public var family: HTTPDNSAddressFamily
    /// How long a signature stays valid after it is made (its expiry `t` is now plus this,
    /// on the service's clock as learned from its `Date` header).
    public var signatureLifetime: TimeInterval
    /// When true, an expired cached answer is returned at once (its `source` is `.stale`) and
    /// a refresh is started in the background; when false, an expired answer is resolved again.
    public var reuseExpiredAnswers: Bool
    /// When true, a name no service could answer is resolved by the system resolver
    /// (getaddrinfo, on a thread of its own); when false, the resolve throws.
    public var systemResolverFallback: Bool
    /// The timeout of one request to one service.
    public var requestTimeout: TimeInterval

    public init(
        services: [URL], account: String = "default", credentials: HTTPDNSCredentials? = nil,
        encryptionKey: HTTPDNSEncryptionKey? = nil, family: HTTPDNSAddressFamily = .ipv4, signatureLifetime: TimeInterval = 300,
        reuseExpiredAnswers: Bool = false, systemResolverFallback: Bool = true, requestTimeout: TimeInterval = 5
    ) {
        self.services = services
        self.account = account
        self.credentials = credentials
        self.encryptionKey = encryptionKey
        self.family = family
        self.signatureLifetime = signatureLifetime
        self.reuseExpiredAnswers = reuseExpiredAnswers
        self.systemResolverFallback = systemResolverFallback
        self.requestTimeout = requestTimeout
    }
}

/// A client key of the account: its id (`kid`) and secret. The secret is never logged or
/// printed (`description` hides it).
public struct HTTPDNSCredentials: Sendable, CustomStringConvertible {
    public var keyID: String
    public var secret: String

    public init(keyID: String, secret: String) {
        self.keyID = keyID
        self.secret = secret
    }

    public var description: String { "HTTPDNSCredentials(keyID: \(keyID), secret: ***)" }
}

/// The address families of a resolve: the v1 API's `type`.
public enum HTTPDNSAddressFamily: String, Sendable, Hashable {
    case ipv4 = "A"
    case ipv6 = "AAAA"
    case both
}

/// The time an `HTTPDNSClient` reads: the system clock, or a test's manual clock.
public protocol HTTPDNSClock: Sendable {
    func now() -> Date
}

/// The system's wall clock.
public struct SystemHTTPDNSClock: HTTPDNSClock {
    public init() {}
    public func now() -> Date { Date() }
}
