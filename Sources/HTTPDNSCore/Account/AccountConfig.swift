import Foundation

/// The configuration of one account, with the SDK's option names. Values are validated when read
/// from JSON; a default-constructed config is the documented default.
public struct AccountConfig: Sendable, Equatable {
    /// Upstreams in failover order: the configured list, else the public default over `scheme`.
    public var upstreams: [UpstreamSpec] {
        get { customUpstreams ?? Self.publicDefaultUpstreams(scheme: scheme) }
        set { customUpstreams = newValue }
    }
    /// The `upstreams` the operator set; nil means the public default.
    public private(set) var customUpstreams: [UpstreamSpec]?
    /// `http` or `https`: how the public default upstreams are reached.
    public var scheme: Scheme = .https
    /// Ask the system resolver when every upstream failed.
    public var localDNSFallback = true
    /// `host:port` servers for the fallback; empty means `/etc/resolv.conf` and `/etc/hosts`.
    public var localDNSServers: [String] = []
    public var cacheEnable = true
    public var cacheCountLimit = 10_000
    /// Cap on positive TTLs, seconds.
    public var maxCacheTTL: UInt32 = 3600
    /// Cap on negative TTLs, seconds.
    public var maxNegativeCache: UInt32 = 30
    /// `type=auto` includes AAAA only when this is on.
    public var ipv6Enable = false
    /// Per-request upstream timeout, seconds.
    public var timeout: Double = 3
    /// Persist the account's cache and load it back at start-up.
    public var persistentCacheIPEnabled = true
    /// At start-up, drop persisted entries expired for longer than this many seconds.
    public var discardRecordsHasExpiredFor: Double = 86_400
    /// Credentials httpdnsd uses for signed requests to its upstreams (secrets are redacted in
    /// every output). Not the keys clients sign with: those are `clientKeys`.
    public var accessKeyId: String?
    public var accessKeySecret: String?
    public var secretKey: String?

    // MARK: Client authentication

    /// Keys the account's clients sign requests with. Empty: the account is open to anyone who
    /// can reach it.
    public var clientKeys: [ClientKey] = []
    /// Every request to the account's endpoints must carry a valid signature (needs `clientKeys`).
    /// When false, unsigned requests are served and signed ones are still checked.
    public var requireSignedRequests = false
    /// How far in the future a signature's expiry `t` may lie, seconds.
    public var maxSignatureAge: Double = 600

    /// Only signed requests are served (`requireSignedRequests` with `clientKeys`).
    public var requiresSignatures: Bool { requireSignedRequests && !clientKeys.isEmpty }

    /// What a request naming no account is checked against while accounts are hidden
    /// (`AccountRegistry.hidesAccounts`): an account that requires signatures and has no key, so
    /// that every signature check runs and refuses as it would for a key the caller does not have.
    public static let hidden: AccountConfig = {
        var config = AccountConfig()
        config.requireSignedRequests = true
        return config
    }()

    // MARK: SDK behaviours

    /// Answer an expired entry at once (`stale`) and refresh it in the background.
    public var reuseExpiredIPEnabled = false
    /// Never serve an answer that expired longer ago than this, seconds (reuse and serve-stale).
    public var maxStaleAge: Double = 86_400
    /// Hosts (and their subdomains) never served stale: an address rotation there breaks TLS.
    public var staleExcludeHosts: [HostName] = []
    /// Refresh entries requested in the last 10% of their TTL, and every minute those that
    /// expired after being requested.
    public var schedulePrefetchEnable = true
    /// Probe the addresses of multi-address answers and list the fastest first.
    public var speedTestEnable = false
    /// TCP port the speed test connects to; 0 means ICMP echo (TCP 443 where ICMP is not allowed).
    public var speedPort = 0
    /// Hard timeout of one probe, seconds.
    public var speedTestTimeout: Double = 1
    /// Keep a cache per client network (/24, /56) and send it upstream as EDNS Client Subnet.
    public var ispEnable = false
    /// Reply with a bare address array unless the request says `short=0`.
    public var shortEnable = false
    /// Floor on positive TTLs, seconds (never above `maxCacheTTL`).
    public var minCacheTTL: UInt32 = 0
    /// When upstreams or network settings change through the admin API, re-resolve every cached
    /// host in the background.
    public var preResolveAfterNetworkChanged = false

    // MARK: Encrypted client requests (docs/encryption.md)

    /// AES-256-GCM key for `enc` requests and their answers: 64 hex digits, stored lower-case
    /// (redacted in every output). Unrelated to `secretKey`, which httpdnsd uses towards upstreams.
    public var aesSecretKey: String?
    /// Refuse plain (unencrypted) requests to the account's tenant endpoints; needs `aesSecretKey`.
    public var requireEncryption = false

    /// The 32 bytes of `aesSecretKey`.
    public var aesKey: [UInt8]? { aesSecretKey.flatMap(Self.aesKeyBytes(hex:)) }

    /// The 32 bytes 64 hex digits stand for, or nil for anything else.
    public static func aesKeyBytes(hex: String) -> [UInt8]? {
        hex.utf8.count == 64 ? HexDigits.bytes(hex) : nil
    }

    // MARK: Limits

    /// Requests per second one client address may make to this account; nil takes the service's
    /// `rateLimit`, 0 turns the limit off for this account.
    public var rateLimit: Double?
    /// Requests a client may make at once before `rateLimit` applies; nil takes the service's
    /// `rateBurst` (0 there: twice the rate, at least 1).
    public var rateBurst: Int?
    /// Upstream queries per second the account may start (misses, refreshes, preloads); 0 means
    /// no budget. Joining a query already in flight costs nothing.
    public var upstreamQPS: Double = 0

    // MARK: Names served

    /// Which names the account resolves (`domains`): by default every name.
    public var domains = DomainPolicy()
    /// How some names are cached (`hostOverrides`: TTL, no caching, stale bound): none by default.
    public var hostOverrides = HostOverrides()
    /// Custom answers for some names and clients (`rules`, docs/rules.md): none by default.
    public var rules = AnswerRules()
    /// The prefix AAAA answers are synthesized under for names with A records only (`dns64Prefix`,
    /// DNS64); nil (the default): none are.
    public var dns64Prefix: DNS64Prefix?

    // MARK: Query log

    /// Which of the account's name lookups are logged, and for how long (`queryLog`; off by default).
    public var queryLog = QueryLogSettings()

    public enum Scheme: String, Sendable, CaseIterable {
        case http
        case https
    }

    public init() {}

    /// The embedded default: Alibaba Public DNS over HTTPS (for users' machines; never used by tests).
    public static let publicDefaultUpstreams = publicDefaultUpstreams(scheme: .https)

    /// Alibaba Public DNS JSON API over `scheme`.
    public static func publicDefaultUpstreams(scheme: Scheme) -> [UpstreamSpec] {
        ["223.5.5.5", "223.6.6.6"].map { UpstreamSpec(kind: .json, url: "\(scheme.rawValue)://\($0)/resolve") }
    }

    /// What stands for a secret in every output.
    public static let redactedSecret = "***"

    /// TTL given to answers that carry none (system resolver, JSON `short=1`), seconds.
    public static let answerDefaultTTL: UInt32 = 60

    package static let keys = Set<String>([
        "upstreams", "localDNSFallback", "localDNSServers", "cacheEnable", "cacheCountLimit", "maxCacheTTL",
        "maxNegativeCache", "ipv6Enable", "timeout", "persistentCacheIPEnabled", "discardRecordsHasExpiredFor",
        "accessKeyId", "accessKeySecret", "secretKey", "reuseExpiredIPEnabled", "maxStaleAge", "staleExcludeHosts",
        "schedulePrefetchEnable", "speedTestEnable", "speedPort", "speedTestTimeout", "ispEnable", "shortEnable",
        "minCacheTTL", "scheme", "preResolveAfterNetworkChanged", "clientKeys", "requireSignedRequests", "maxSignatureAge",
        "aesSecretKey", "requireEncryption",
        "rateLimit", "rateBurst", "upstreamQPS", "queryLog",
    ]).union(policyKeys)

    /// The keys of the tenant's policy document (`GET`/`PUT /v1/{account}/policy`,
    /// `PolicyDocument`): what a tenant decides about the names it resolves, each with how it
    /// goes back to its default. The one list of them: the document holds these keys and no
    /// other, read and validated by `init(json:)` like every other key.
    public static let policy: [(key: String, reset: @Sendable (inout AccountConfig) -> Void)] = [
        ("domains", { $0.domains = DomainPolicy() }),
        ("hostOverrides", { $0.hostOverrides = HostOverrides() }),
        ("dns64Prefix", { $0.dns64Prefix = nil }),
        ("rules", { $0.rules = AnswerRules() }),
    ]

    /// The names of `policy`'s keys, in its order.
    public static let policyKeys = policy.map(\.key)

    /// Overlays the keys present in `object` onto `base`; `path` prefixes key names in errors.
    /// With `allowingRedacted` (the admin PUT), a client key's secret may be `***`, to be replaced
    /// by `keepingSecrets(of:)`; anywhere else it is too short to be a secret.
    public init(
        json object: [String: Any], base: AccountConfig = AccountConfig(), path: String, allowingRedacted: Bool = false
    ) throws(ConfigError) {
        self = base
        let reader = JSONObjectReader(object, path: path)
        try reader.checkKeys(Self.keys)
        // Read in this order: with several bad keys, the error names the first of them.
        try readUpstreamAndCacheKeys(reader, object)
        try readAnswerKeys(reader)
        try readClientSecurityKeys(reader, object, allowingRedacted: allowingRedacted)
        if let value = try reader.double("rateLimit", range: 0...1_000_000) { rateLimit = value }
        if let value = try reader.int("rateBurst", range: 1...10_000_000) { rateBurst = value }
        if let value = try reader.double("upstreamQPS", range: 0...1_000_000) { upstreamQPS = value }
        if let object = try reader.object("domains") {
            domains = try DomainPolicy.read(object, base: domains, path: reader.keyPath("domains"))
        }
        if let value = object["hostOverrides"], !(value is NSNull) {
            hostOverrides = try HostOverrides.read(value, path: reader.keyPath("hostOverrides"))
        }
        if let value = object["rules"], !(value is NSNull) {
            rules = try AnswerRules.read(value, path: reader.keyPath("rules"))
        }
        if object.keys.contains("dns64Prefix") {
            dns64Prefix = try reader.string("dns64Prefix").map { text throws(ConfigError) in
                try DNS64Prefix.read(text, key: reader.keyPath("dns64Prefix"))
            }
        }
        if let object = try reader.object("queryLog") {
            queryLog = try QueryLogSettings.read(object, base: queryLog, path: reader.keyPath("queryLog"))
        }
        if minCacheTTL > maxCacheTTL {
            throw ConfigError(key: reader.keyPath("minCacheTTL"), "(\(minCacheTTL)) is above maxCacheTTL (\(maxCacheTTL))")
        }
        if upstreams.isEmpty && !localDNSFallback {
            throw ConfigError(key: reader.keyPath("upstreams"), "is empty and localDNSFallback is false: nothing could resolve")
        }
    }

    /// `init(json:)`'s upstream, fallback, cache and upstream-credential keys.
    private mutating func readUpstreamAndCacheKeys(_ reader: JSONObjectReader, _ object: [String: Any]) throws(ConfigError) {
        if let list = try reader.strings("upstreams") {
            var specs: [UpstreamSpec] = []
            for (index, text) in list.enumerated() {
                specs.append(try UpstreamSpec(parsing: text, key: "\(reader.keyPath("upstreams"))[\(index)]"))
            }
            upstreams = specs
        }
        if let value = try reader.bool("localDNSFallback") { localDNSFallback = value }
        if let list = try reader.strings("localDNSServers") {
            localDNSServers = try Self.validateServers(list, key: reader.keyPath("localDNSServers"))
        }
        if let value = try reader.bool("cacheEnable") { cacheEnable = value }
        if let value = try reader.int("cacheCountLimit", range: 1...100_000_000) { cacheCountLimit = value }
        if let value = try reader.int("maxCacheTTL", range: 1...604_800) { maxCacheTTL = UInt32(value) }
        if let value = try reader.int("maxNegativeCache", range: 0...86_400) { maxNegativeCache = UInt32(value) }
        if let value = try reader.bool("ipv6Enable") { ipv6Enable = value }
        if let value = try reader.double("timeout", range: 0.05...60) { timeout = value }
        if let value = try reader.bool("persistentCacheIPEnabled") { persistentCacheIPEnabled = value }
        if let value = try reader.double("discardRecordsHasExpiredFor", range: 0...31_536_000) {
            discardRecordsHasExpiredFor = value
        }
        if object.keys.contains("accessKeyId") { accessKeyId = try reader.string("accessKeyId") }
        if object.keys.contains("accessKeySecret") { accessKeySecret = try reader.string("accessKeySecret") }
        if object.keys.contains("secretKey") { secretKey = try reader.string("secretKey") }
    }

    /// `init(json:)`'s keys for how answers are served: stale answers, prefetch, the speed test,
    /// per-network caching, answer shape and refresh after a change.
    private mutating func readAnswerKeys(_ reader: JSONObjectReader) throws(ConfigError) {
        if let value = try reader.bool("reuseExpiredIPEnabled") { reuseExpiredIPEnabled = value }
        if let value = try reader.double("maxStaleAge", range: 0...31_536_000) { maxStaleAge = value }
        if let list = try reader.strings("staleExcludeHosts") {
            staleExcludeHosts = try list.enumerated().map { index, text throws(ConfigError) in
                guard let host = HostName(text.hasPrefix(".") ? String(text.dropFirst()) : text) else {
                    throw ConfigError(key: "\(reader.keyPath("staleExcludeHosts"))[\(index)]", "'\(text)' is not a host name")
                }
                return host
            }
        }
        if let value = try reader.bool("schedulePrefetchEnable") { schedulePrefetchEnable = value }
        if let value = try reader.bool("speedTestEnable") { speedTestEnable = value }
        if let value = try reader.int("speedPort", range: 0...65_535) { speedPort = value }
        if let value = try reader.double("speedTestTimeout", range: 0.01...10) { speedTestTimeout = value }
        if let value = try reader.bool("ispEnable") { ispEnable = value }
        if let value = try reader.bool("shortEnable") { shortEnable = value }
        if let value = try reader.int("minCacheTTL", range: 0...604_800) { minCacheTTL = UInt32(value) }
        if let text = try reader.string("scheme") {
            guard let value = Scheme(rawValue: text) else {
                throw ConfigError(key: reader.keyPath("scheme"), "must be http or https, got '\(text)'")
            }
            scheme = value
        }
        if let value = try reader.bool("preResolveAfterNetworkChanged") { preResolveAfterNetworkChanged = value }
    }

    /// `init(json:)`'s client signature and encryption keys, each checked against the key that
    /// makes it usable.
    private mutating func readClientSecurityKeys(
        _ reader: JSONObjectReader, _ object: [String: Any], allowingRedacted: Bool
    ) throws(ConfigError) {
        if let value = object["clientKeys"], !(value is NSNull) {
            clientKeys = try ClientKey.list(value, key: reader.keyPath("clientKeys"), allowingRedacted: allowingRedacted)
        }
        if let value = try reader.bool("requireSignedRequests") { requireSignedRequests = value }
        if let value = try reader.double("maxSignatureAge", range: 10...86_400) { maxSignatureAge = value }
        if requireSignedRequests && clientKeys.isEmpty {
            throw ConfigError(key: reader.keyPath("requireSignedRequests"), "is true but clientKeys is empty: no request could be served")
        }
        if object.keys.contains("aesSecretKey") {
            aesSecretKey = try reader.string("aesSecretKey").map { text throws(ConfigError) in
                // The value is never echoed: it is a secret even when malformed. "***" (the admin
                // PUT only) stands for the stored key: `keepingSecrets(of:)` puts it back.
                guard Self.aesKeyBytes(hex: text) != nil || (allowingRedacted && text == Self.redactedSecret) else {
                    throw ConfigError(
                        key: reader.keyPath("aesSecretKey"), "must be 64 hexadecimal digits (32 bytes, e.g. from `openssl rand -hex 32`)")
                }
                return text.lowercased()
            }
        }
        if let value = try reader.bool("requireEncryption") { requireEncryption = value }
        if requireEncryption && aesSecretKey == nil {
            throw ConfigError(key: reader.keyPath("requireEncryption"), "is true but the account has no aesSecretKey")
        }
    }

    /// Checks a list of fallback resolver addresses: `IPv4`, `IPv4:port`, `IPv6` or `[IPv6]:port`
    /// (port 1-65535). The resolver takes addresses only: a host name would need a resolver itself.
    public static func validateServers(_ list: [String], key: String) throws(ConfigError) -> [String] {
        for (index, server) in list.enumerated() {
            let trimmed = server.trimmingCharacters(in: .whitespaces)
            guard isServerAddress(trimmed) else {
                throw ConfigError(
                    key: "\(key)[\(index)]",
                    "'\(Log.escaped(server))' is not an IP address with an optional port (127.0.0.1, 127.0.0.1:53, ::1, [::1]:53)")
            }
        }
        return list.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    private static func isServerAddress(_ text: String) -> Bool {
        if IPAddress(text) != nil { return true }
        guard case .success(let parts) = HostPort.split(text),
            IPAddress(String(parts.host))?.family == (parts.bracketed ? .aaaa : .a)
        else { return false }
        let port = parts.port
        return port.allSatisfy(\.isASCII) && (UInt16(port) ?? 0) > 0
    }

    /// True when `host` is a `staleExcludeHosts` entry or a subdomain of one.
    public func isStaleExcluded(_ host: HostName) -> Bool {
        staleExcludeHosts.contains { host.hasSuffix($0) }
    }

    /// Per-request timeout in whole milliseconds.
    public var timeoutMilliseconds: Int { Int((timeout * 1000).rounded()) }

    /// The configuration as a JSON object. With `redacted`, secrets are replaced by "***".
    public func jsonObject(redacted: Bool) -> [String: Any] {
        var object: [String: Any] = [
            "upstreams": upstreams.map { redacted ? $0.redactedText : $0.text },
            "localDNSFallback": localDNSFallback,
            "localDNSServers": localDNSServers,
            "cacheEnable": cacheEnable,
            "cacheCountLimit": cacheCountLimit,
            "maxCacheTTL": Int(maxCacheTTL),
            "maxNegativeCache": Int(maxNegativeCache),
            "ipv6Enable": ipv6Enable,
            "timeout": timeout,
            "persistentCacheIPEnabled": persistentCacheIPEnabled,
            "discardRecordsHasExpiredFor": discardRecordsHasExpiredFor,
            "reuseExpiredIPEnabled": reuseExpiredIPEnabled,
            "maxStaleAge": maxStaleAge,
            "staleExcludeHosts": staleExcludeHosts.map(\.value),
            "schedulePrefetchEnable": schedulePrefetchEnable,
            "speedTestEnable": speedTestEnable,
            "speedPort": speedPort,
            "speedTestTimeout": speedTestTimeout,
            "ispEnable": ispEnable,
            "shortEnable": shortEnable,
            "minCacheTTL": Int(minCacheTTL),
            "scheme": scheme.rawValue,
            "preResolveAfterNetworkChanged": preResolveAfterNetworkChanged,
            "clientKeys": clientKeys.map { $0.jsonObject(redacted: redacted) },
            "requireSignedRequests": requireSignedRequests,
            "maxSignatureAge": maxSignatureAge,
            "requireEncryption": requireEncryption,
            "upstreamQPS": upstreamQPS,
        ]
        if let rateLimit { object["rateLimit"] = rateLimit }
        if let rateBurst { object["rateBurst"] = rateBurst }
        // Written only when set: the configuration of an account without a policy reads as before.
        if domains != DomainPolicy() { object["domains"] = domains.jsonObject }
        if !hostOverrides.isEmpty { object["hostOverrides"] = hostOverrides.jsonObject }
        if !rules.isEmpty { object["rules"] = rules.jsonObject }
        if let dns64Prefix { object["dns64Prefix"] = dns64Prefix.description }
        if queryLog != QueryLogSettings() { object["queryLog"] = queryLog.jsonObject }
        if let accessKeyId { object["accessKeyId"] = accessKeyId }
        if let accessKeySecret { object["accessKeySecret"] = redacted ? Self.redactedSecret : accessKeySecret }
        if let secretKey { object["secretKey"] = redacted ? Self.redactedSecret : secretKey }
        if let aesSecretKey { object["aesSecretKey"] = redacted ? Self.redactedSecret : aesSecretKey }
        return object
    }

    /// Replaces every `***` secret (what an admin GET shows) with the one `existing` holds: the
    /// upstream credentials, `aesSecretKey`, and each client key's secret by key id. Throws, naming the key, for a
    /// `***` that has nothing to stand for.
    public func keepingSecrets(of existing: AccountConfig?) throws(ConfigError) -> AccountConfig {
        var config = self
        let redacted = Self.redactedSecret
        func kept(_ secret: String?, _ stored: String?, key: String) throws(ConfigError) -> String? {
            guard secret == redacted else { return secret }
            guard let stored, stored != redacted else {
                throw ConfigError(key: key, "\"***\" stands for a stored secret, and there is none to keep")
            }
            return stored
        }
        config.accessKeySecret = try kept(accessKeySecret, existing?.accessKeySecret, key: "accessKeySecret")
        config.secretKey = try kept(secretKey, existing?.secretKey, key: "secretKey")
        config.aesSecretKey = try kept(aesSecretKey, existing?.aesSecretKey, key: "aesSecretKey")
        for index in config.clientKeys.indices where config.clientKeys[index].secret == redacted {
            let id = config.clientKeys[index].id
            guard let stored = existing?.clientKeys.first(where: { $0.id == id }), stored.secret != redacted else {
                throw ConfigError(
                    key: "clientKeys[\(index)].secret", "\"***\" stands for the stored secret of key '\(id)', and there is none")
            }
            config.clientKeys[index].secret = stored.secret
        }
        // An upstream read back with its URL credentials as "***": the stored upstream it stands for.
        if config.customUpstreams != nil {
            var upstreams = config.upstreams
            for (index, upstream) in upstreams.enumerated() where upstream.url.contains(redacted) {
                guard let kept = existing?.upstreams.first(where: { $0.hasCredentials && $0.redactedText == upstream.text }) else {
                    throw ConfigError(
                        key: "upstreams[\(index)]",
                        "\"***\" stands for stored credentials, and there is no upstream \(upstream.description) with credentials to keep")
                }
                upstreams[index] = kept
            }
            config.upstreams = upstreams
        }
        return config
    }

    /// `jsonObject` serialised with sorted keys. Throws rather than give a stand-in: this text is
    /// what the database keeps, and an empty object there would be a different account.
    public func jsonText(redacted: Bool) throws(ConfigError) -> String {
        let object = jsonObject(redacted: redacted)
        guard JSONSerialization.isValidJSONObject(object) else {
            throw ConfigError(key: "", "the account's configuration cannot be written as JSON")
        }
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            return String(decoding: data, as: UTF8.self)
        } catch {
            throw ConfigError(key: "", "the account's configuration cannot be written as JSON: \(error)")
        }
    }
}
