import Foundation
import HTTPDNSCore

/// Everything the service is started with: listener, limits, database, admin token and accounts.
/// Read from the JSON file, then `HTTPDNS_*` environment variables, then flags (later wins).
public struct ServiceConfig: Sendable, Equatable {
    public var listenHost = "127.0.0.1"
    public var listenPort: UInt16 = 8080
    public var databasePath = "./httpdnsd.sqlite"
    public var adminToken: String?
    /// HTTP threads (each serves its connections and makes its misses' upstream requests); 0 means one per core.
    public var threads = 0
    public var connectionLimit = 4096
    /// Open connections per client address (trusted proxies exempt); 0 means no limit.
    public var perIPConnectionLimit = 64
    /// Bits of an IPv6 address that name one client for the per-client limits (connections,
    /// request rate, upstream budget shares): a /64 by default.
    public var clientIPv6PrefixLength = 64
    /// Idle connection timeout, seconds.
    public var connectionTimeout = 30
    /// Seconds a request may take to arrive whole, whatever the pace of its bytes; 0 = none.
    public var requestReadTimeout = 10
    /// PEM certificate chain and private key: the main listener serves HTTPS when both are set.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// A second, plain-HTTP listener for the same API beside an HTTPS one (in-cluster clients).
    public var listenPlain: ListenAddress?
    /// The operations listener: `/metrics` and the admin API only there, probes everywhere.
    public var opsListen: ListenAddress?
    /// The plain DNS listener (UDP and TCP, `docs/dns.md`); nil: none.
    public var dnsListen: ListenAddress?
    /// The account the plain DNS listener answers for.
    public var dnsAccount = "default"
    /// The Unix socket of a dnstap collector the query log is streamed to; nil: none.
    public var dnstapSocket: String?
    /// The DNS over TLS listener (`docs/dot.md`); nil: none. Needs `tlsCert` and `tlsKey`.
    public var dotListen: ListenAddress?
    /// `<account>.<dotAccountDomain>` as TLS server name selects the DoT connection's account.
    public var dotAccountDomain: String?
    /// Bytes of buffer per connection (headers and body chunks).
    public var connectionMemoryLimit = 16_384
    /// Largest request body accepted; 413 beyond.
    public var maxBodyBytes = 1 << 20
    /// Hosts one preload request may carry.
    public var maxPreloadHosts = 10_000
    /// Upstream resolutions one preload keeps in flight.
    public var preloadConcurrency = 32
    /// Proxies whose `X-Forwarded-For` is believed when choosing a request's client network.
    public var trustedProxies: [CIDR] = []
    /// What `GET /{account}/ss` (EMAS API) tells clients to use next: `host[:port]` entries;
    /// nil means the listen address when it is not a wildcard.
    public var advertisedAddresses: [String]?
    /// A file holding the admin token (a Kubernetes Secret); read by `load`, which sets
    /// `adminToken` from it. `adminTokenFileKey` is the key, variable or flag that named it.
    public var adminTokenFile: String?
    var adminTokenFileKey = "adminTokenFile"
    /// Requests per second per client address and account (0: no limit); accounts may override.
    public var rateLimit: Double = 0
    /// Requests a client may make at once before `rateLimit` applies (0: twice the rate).
    public var rateBurst = 0
    /// Which accounts `/metrics` on the operations listener shows per account.
    public var metricsAccounts = MetricsAccounts.all
    /// Whether tenant request durations are recorded (`httpdns_request_duration_seconds`).
    public var metricsHistograms = true
    /// Line format of the log on standard error.
    public var logFormat: Log.Format = .text
    /// Lowest level written.
    public var logLevel: Log.Level = .info
    /// One log line per request (method, path without secrets, status, duration, account,
    /// source, bytes, peer, request id); off by default.
    public var accessLog = false
    /// MaxMind DB files the `countries`/`regions` and `asns` conditions of `rules` read; nil: none.
    public var geoDatabasePath: String?
    public var asnDatabasePath: String?
    /// Seconds between SIGTERM and closing the listeners: `/readyz` answers 503 at once while
    /// connections are still accepted, so load balancers stop sending before anything is refused.
    public var shutdownDrain: Double = 5
    /// The shared Redis of a fleet of replicas (docs/redis.md); nil: none, nothing connects.
    public var redis: RedisURL?
    /// Prefix of every Redis key and channel, so several clusters can share one Redis.
    public var redisPrefix = "httpdnsd:"
    /// Milliseconds any Redis command may take before the caller goes on without it.
    public var redisTimeoutMilliseconds = 50
    /// The write-behind queue's bound: cache changes waiting for SQLite (queued or being
    /// committed) at most; beyond, changes to keys not already queued are dropped and counted.
    public var storeMaxPendingChanges = 500_000
    /// Account id → configuration.
    public var accounts: [String: AccountConfig] = ["default": AccountConfig()]

    public init() {}

    public var listen: String {
        listenHost.contains(":") ? "[\(listenHost)]:\(listenPort)" : "\(listenHost):\(listenPort)"
    }

    /// The addresses `/ss` gives: `advertisedAddresses`, else the listen address unless it is a
    /// wildcard (`0.0.0.0`, `::`), which no client can use.
    public var effectiveAdvertisedAddresses: [String] {
        if let advertisedAddresses { return advertisedAddresses }
        return listenHost == "0.0.0.0" || listenHost == "::" || listenHost.isEmpty ? [] : [listen]
    }

    /// TLS needs both files; a plain second listener exists only beside an HTTPS one, and so
    /// does a DoT listener (it serves the same certificate).
    func validateListeners() throws(ConfigError) {
        if tlsCertificatePath != nil && tlsKeyPath == nil {
            throw ConfigError(key: "tlsKey", "is needed with tlsCert (set both or neither)")
        }
        if tlsKeyPath != nil && tlsCertificatePath == nil {
            throw ConfigError(key: "tlsCert", "is needed with tlsKey (set both or neither)")
        }
        if dotListen != nil && tlsCertificatePath == nil {
            throw ConfigError(key: "dotListen", "needs a certificate: set tlsCert and tlsKey (DNS over TLS serves the HTTPS listener's)")
        }
        if listenPlain != nil && tlsCertificatePath == nil {
            throw ConfigError(
                key: "listenPlain",
                "is a plain listener beside an HTTPS one: set tlsCert and tlsKey (the main listener is plain HTTP without them)")
        }
    }
}
