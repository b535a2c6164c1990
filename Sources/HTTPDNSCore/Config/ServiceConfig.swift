import Foundation

/// Everything the service is started with: listener, limits, database, admin token and accounts.
/// Read from the JSON file, then `HTTPDNS_*` environment variables, then flags (later wins).
public struct ServiceConfig: Sendable, Equatable {
    public var listenHost = "127.0.0.1"
    public var listenPort: UInt16 = 8080
    public var databasePath = "./httpdnsd.sqlite"
    public var adminToken: String?
    /// HTTP worker threads; 0 means one per core.
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
    /// Seconds between SIGTERM and closing the listeners: `/readyz` answers 503 at once while
    /// connections are still accepted, so load balancers stop sending before anything is refused.
    public var shutdownDrain: Double = 5
    /// The shared Redis of a fleet of replicas (issue 15, docs/redis.md); nil: none, nothing connects.
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

    /// One service-level setting: its file key, environment variable and flag.
    struct Setting: Sendable {
        let key: String
        let env: String
        let flag: String
        let help: String
        let apply: @Sendable (inout ServiceConfig, String, String) throws(ConfigError) -> Void
        /// The setting takes `true`/`false` in the config file as well as strings.
        var acceptsBool = false
        /// How a JSON array in the config file is applied (the elements and the key); nil when
        /// the setting takes a string or a number only.
        var applyList: (@Sendable (inout ServiceConfig, [Any], String) throws(ConfigError) -> Void)? = nil

        /// A setting whose value is a list: comma-separated in the environment and on the command
        /// line, a JSON array of strings in the file. `parse` checks one element (given the key
        /// path to name in its error), `assign` stores the whole list.
        static func list<Element>(
            key: String, env: String, flag: String, help: String,
            parse: @escaping @Sendable (String, String) throws(ConfigError) -> Element,
            assign: @escaping @Sendable (inout ServiceConfig, [Element]) -> Void
        ) -> Setting {
            Setting(
                key: key, env: env, flag: flag, help: help,
                apply: { config, value, name throws(ConfigError) in
                    let parts = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                    var elements: [Element] = []
                    for part in parts { elements.append(try parse(part, name)) }
                    assign(&config, elements)
                },
                applyList: { config, items, name throws(ConfigError) in
                    var elements: [Element] = []
                    for (index, item) in items.enumerated() {
                        guard let text = item as? String else { throw ConfigError(key: "\(name)[\(index)]", "must be a string") }
                        elements.append(try parse(text, "\(name)[\(index)]"))
                    }
                    assign(&config, elements)
                })
        }
    }

    static let settings: [Setting] = [
        Setting(
            key: "listen", env: "HTTPDNS_LISTEN", flag: "--listen",
            help: "address:port to listen on (default 127.0.0.1:8080; [::1]:8080 for IPv6)"
        ) { config, value, name throws(ConfigError) in
            (config.listenHost, config.listenPort) = try parseListen(value, key: name)
        },
        Setting(key: "db", env: "HTTPDNS_DB", flag: "--db", help: "SQLite database file (default ./httpdnsd.sqlite)") {
            config, value, name throws(ConfigError) in
            guard !value.isEmpty else { throw ConfigError(key: name, "must not be empty") }
            config.databasePath = value
        },
        Setting(
            key: "adminToken", env: "HTTPDNS_ADMIN_TOKEN", flag: "--admin-token",
            help: "bearer token of the admin API; without one the admin API answers 403"
        ) { config, value, name throws(ConfigError) in
            guard value.count >= 8 else { throw ConfigError(key: name, "must be at least 8 characters") }
            config.adminToken = value
        },
        Setting(
            key: "adminTokenFile", env: "HTTPDNS_ADMIN_TOKEN_FILE", flag: "--admin-token-file",
            help: "file holding the admin token (e.g. a mounted Kubernetes Secret; one trailing newline is ignored)"
        ) { config, value, name throws(ConfigError) in
            guard !value.isEmpty else { throw ConfigError(key: name, "must not be empty") }
            config.adminTokenFile = value
            config.adminTokenFileKey = name
        },
        Setting(key: "threads", env: "HTTPDNS_THREADS", flag: "--threads", help: "HTTP worker threads (default 0 = one per core)") {
            config, value, name throws(ConfigError) in
            config.threads = try parseInt(value, key: name, range: 0...256)
        },
        Setting(
            key: "connectionLimit", env: "HTTPDNS_CONNECTION_LIMIT", flag: "--connection-limit",
            help: "open connections at most (default 4096)"
        ) { config, value, name throws(ConfigError) in
            config.connectionLimit = try parseInt(value, key: name, range: 1...1_000_000)
        },
        Setting(
            key: "perIPConnectionLimit", env: "HTTPDNS_PER_IP_CONNECTION_LIMIT", flag: "--per-ip-connection-limit",
            help: "open connections per client address; trusted proxies exempt (default 64, 0 = no limit)"
        ) { config, value, name throws(ConfigError) in
            config.perIPConnectionLimit = try parseInt(value, key: name, range: 0...1_000_000)
        },
        Setting(
            key: "clientIPv6PrefixLength", env: "HTTPDNS_CLIENT_IPV6_PREFIX_LENGTH", flag: "--client-ipv6-prefix-length",
            help: "bits of an IPv6 address naming one client for perIPConnectionLimit, rateLimit, upstreamQPS (default 64; 32-128)"
        ) { config, value, name throws(ConfigError) in
            config.clientIPv6PrefixLength = try parseInt(value, key: name, range: 32...128)
        },
        Setting(
            key: "connectionTimeout", env: "HTTPDNS_CONNECTION_TIMEOUT", flag: "--connection-timeout",
            help: "seconds an idle connection is kept (default 30)"
        ) { config, value, name throws(ConfigError) in
            config.connectionTimeout = try parseInt(value, key: name, range: 1...3600)
        },
        Setting(
            key: "requestReadTimeout", env: "HTTPDNS_REQUEST_READ_TIMEOUT", flag: "--request-read-timeout",
            help: "seconds a request (head and body) may take to arrive whole, however its bytes trickle (default 10, 0 = none)"
        ) { config, value, name throws(ConfigError) in
            config.requestReadTimeout = try parseInt(value, key: name, range: 0...3600)
        },
        Setting(
            key: "tlsCert", env: "HTTPDNS_TLS_CERT", flag: "--tls-cert",
            help:
                "PEM certificate chain file: with tlsKey, the listener serves HTTPS (TLS 1.2/1.3); reloaded on SIGHUP and when the files change"
        ) { config, value, name throws(ConfigError) in
            guard !value.isEmpty else { throw ConfigError(key: name, "must not be empty") }
            config.tlsCertificatePath = value
        },
        Setting(key: "tlsKey", env: "HTTPDNS_TLS_KEY", flag: "--tls-key", help: "PEM private key file of tlsCert (unencrypted)") {
            config, value, name throws(ConfigError) in
            guard !value.isEmpty else { throw ConfigError(key: name, "must not be empty") }
            config.tlsKeyPath = value
        },
        Setting(
            key: "listenPlain", env: "HTTPDNS_LISTEN_PLAIN", flag: "--listen-plain",
            help: "address:port of a second, plain-HTTP listener beside the HTTPS one (default none)"
        ) { config, value, name throws(ConfigError) in
            let (host, port) = try parseListen(value, key: name)
            config.listenPlain = ListenAddress(host: host, port: port)
        },
        Setting(
            key: "opsListen", env: "HTTPDNS_OPS_LISTEN", flag: "--ops-listen",
            help: "address:port of the operations listener: /metrics and the admin API only there (default none: on the main listener)"
        ) { config, value, name throws(ConfigError) in
            let (host, port) = try parseListen(value, key: name)
            config.opsListen = ListenAddress(host: host, port: port)
        },
        Setting(
            key: "connectionMemoryLimit", env: "HTTPDNS_CONNECTION_MEMORY_LIMIT", flag: "--connection-memory-limit",
            help:
                "buffer bytes per connection: request head, parsed fields, response head (default 16384; serves the longest API request, about 7 KB, twice over)"
        ) { config, value, name throws(ConfigError) in
            config.connectionMemoryLimit = try parseInt(value, key: name, range: 4096...16_777_216)
        },
        Setting(
            key: "maxBodyBytes", env: "HTTPDNS_MAX_BODY_BYTES", flag: "--max-body-bytes",
            help: "largest request body; 413 beyond (default 1048576)"
        ) { config, value, name throws(ConfigError) in
            config.maxBodyBytes = try parseInt(value, key: name, range: 1...268_435_456)
        },
        Setting(
            key: "maxPreloadHosts", env: "HTTPDNS_MAX_PRELOAD_HOSTS", flag: "--max-preload-hosts",
            help: "hosts one preload request may carry (default 10000)"
        ) { config, value, name throws(ConfigError) in
            config.maxPreloadHosts = try parseInt(value, key: name, range: 1...1_000_000)
        },
        Setting(
            key: "preloadConcurrency", env: "HTTPDNS_PRELOAD_CONCURRENCY", flag: "--preload-concurrency",
            help: "resolutions one preload keeps in flight (default 32)"
        ) { config, value, name throws(ConfigError) in
            config.preloadConcurrency = try parseInt(value, key: name, range: 1...1024)
        },
        Setting.list(
            key: "trustedProxies", env: "HTTPDNS_TRUSTED_PROXIES", flag: "--trusted-proxies",
            help: "comma-separated CIDRs/IPs of proxies whose X-Forwarded-For is believed (default none)",
            parse: { text, key throws(ConfigError) in try parseCIDR(text, key: key) },
            assign: { config, proxies in config.trustedProxies = proxies }),
        Setting.list(
            key: "advertisedAddresses", env: "HTTPDNS_ADVERTISED_ADDRESSES", flag: "--advertised-addresses",
            help:
                "comma-separated host[:port] addresses GET /{account}/ss (EMAS API) tells clients to use (default: the listen address unless it is a wildcard)",
            parse: { text, key throws(ConfigError) in try parseAdvertised(text, key: key) },
            assign: { config, addresses in config.advertisedAddresses = addresses }),
        Setting(
            key: "rateLimit", env: "HTTPDNS_RATE_LIMIT", flag: "--rate-limit",
            help: "requests per second one client address may make to one account; 429 beyond (default 0 = no limit; accounts may override)"
        ) { config, value, name throws(ConfigError) in
            guard let number = Double(value.trimmingCharacters(in: .whitespaces)), number.isFinite, (0...1_000_000).contains(number) else {
                throw ConfigError(key: name, "must be a number of requests per second between 0 and 1000000, got '\(value)'")
            }
            config.rateLimit = number
        },
        Setting(
            key: "logFormat", env: "HTTPDNS_LOG_FORMAT", flag: "--log-format",
            help: "text (TIME LEVEL message key=value) or json (one object a line: time, level, msg, fields) (default text)"
        ) { config, value, name throws(ConfigError) in
            guard let format = Log.Format(rawValue: value.lowercased()) else {
                throw ConfigError(key: name, "must be text or json, got '\(Log.escaped(value))'")
            }
            config.logFormat = format
        },
        Setting(
            key: "logLevel", env: "HTTPDNS_LOG_LEVEL", flag: "--log-level",
            help: "lowest level logged: debug, info, warning or error (default info)"
        ) { config, value, name throws(ConfigError) in
            guard let level = Log.Level(rawValue: value.lowercased()) else {
                throw ConfigError(key: name, "must be debug, info, warning or error, got '\(Log.escaped(value))'")
            }
            config.logLevel = level
        },
        Setting(
            key: "accessLog", env: "HTTPDNS_ACCESS_LOG", flag: "--access-log",
            help: "true/false: one log line per request, with its request id (X-Request-Id) (default false)",
            apply: { config, value, name throws(ConfigError) in
                config.accessLog = try parseBool(value, key: name)
            }, acceptsBool: true),
        Setting(
            key: "shutdownDrain", env: "HTTPDNS_SHUTDOWN_DRAIN", flag: "--shutdown-drain",
            help:
                "seconds after SIGTERM during which /readyz is 503 and connections are still accepted, before the listeners close (default 5)"
        ) { config, value, name throws(ConfigError) in
            guard let seconds = Double(value.trimmingCharacters(in: .whitespaces)), seconds.isFinite, (0...300).contains(seconds) else {
                throw ConfigError(key: name, "must be a number of seconds between 0 and 300, got '\(Log.escaped(value))'")
            }
            config.shutdownDrain = seconds
        },
        Setting(
            key: "storeMaxPendingChanges", env: "HTTPDNS_STORE_MAX_PENDING_CHANGES", flag: "--store-max-pending-changes",
            help:
                "cache changes the write-behind queue holds at most while SQLite is slow or failing (about 300 bytes each); beyond, new ones are dropped and counted (default 500000)"
        ) { config, value, name throws(ConfigError) in
            config.storeMaxPendingChanges = try parseInt(value, key: name, range: 100...100_000_000)
        },
        Setting(
            key: "rateBurst", env: "HTTPDNS_RATE_BURST", flag: "--rate-burst",
            help: "requests a client may make at once before rateLimit applies (default 0 = twice rateLimit)"
        ) { config, value, name throws(ConfigError) in
            config.rateBurst = try parseInt(value, key: name, range: 0...10_000_000)
        },
        Setting(
            key: "metricsAccounts", env: "HTTPDNS_METRICS_ACCOUNTS", flag: "--metrics-accounts",
            help:
                "which accounts /metrics on the operations listener shows series of: all, active (lookups since the previous scrape) or none (totals only, always shown) (default all)"
        ) { config, value, name throws(ConfigError) in
            guard let mode = MetricsAccounts(rawValue: value.trimmingCharacters(in: .whitespaces)) else {
                throw ConfigError(key: name, "must be all, active or none, got '\(value)'")
            }
            config.metricsAccounts = mode
        },
        Setting(
            key: "metricsHistograms", env: "HTTPDNS_METRICS_HISTOGRAMS", flag: "--metrics-histograms",
            help: "true/false: record tenant request durations (httpdns_request_duration_seconds) (default true)"
        ) { config, value, name throws(ConfigError) in
            switch value.lowercased() {
            case "true", "1", "yes", "on": config.metricsHistograms = true
            case "false", "0", "no", "off": config.metricsHistograms = false
            default: throw ConfigError(key: name, "must be true or false, got '\(value)'")
            }
        },
        Setting(
            key: "redis", env: "HTTPDNS_REDIS", flag: "--redis",
            help:
                "redis://[user:password@]host:port[/db] of the Redis replicas share accounts and answers through (default none: nothing shared, nothing connects)"
        ) { config, value, name throws(ConfigError) in
            config.redis = try RedisURL(parsing: value.trimmingCharacters(in: .whitespaces), key: name)
        },
        Setting(
            key: "redisPrefix", env: "HTTPDNS_REDIS_PREFIX", flag: "--redis-prefix",
            help:
                "prefix of every Redis key and channel, so several clusters can share one Redis: 1-64 letters, digits or -_.:{} (default httpdnsd:)"
        ) { config, value, name throws(ConfigError) in
            config.redisPrefix = try parseRedisPrefix(value, key: name)
        },
        Setting(
            key: "redisTimeout", env: "HTTPDNS_REDIS_TIMEOUT", flag: "--redis-timeout",
            help: "milliseconds a Redis command may take before the request goes on without it (default 50)"
        ) { config, value, name throws(ConfigError) in
            config.redisTimeoutMilliseconds = try parseInt(value, key: name, range: 1...10_000)
        },
    ]

    /// A Redis key prefix: 1-64 of letters, digits and `-_.:{}` (braces allow a cluster hash tag).
    static func parseRedisPrefix(_ text: String, key: String) throws(ConfigError) -> String {
        let allowed = text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || "-_.:{}".utf8.contains(byte)
        }
        guard !text.isEmpty, text.utf8.count <= 64, allowed else {
            throw ConfigError(key: key, "must be 1-64 letters, digits or -_.:{}, got '\(Log.escaped(text))'")
        }
        return text
    }

    /// The addresses `/ss` gives: `advertisedAddresses`, else the listen address unless it is a
    /// wildcard (`0.0.0.0`, `::`), which no client can use.
    public var effectiveAdvertisedAddresses: [String] {
        if let advertisedAddresses { return advertisedAddresses }
        return listenHost == "0.0.0.0" || listenHost == "::" || listenHost.isEmpty ? [] : [listen]
    }

    /// One advertised address: an IP address or a host name, optionally with a port
    /// (`192.0.2.1`, `192.0.2.1:8080`, `2001:db8::1`, `[2001:db8::1]:8080`, `dns.example.com:443`).
    static func parseAdvertised(_ text: String, key: String) throws(ConfigError) -> String {
        var host = Substring(text)
        var port: Substring?
        var bracketed = false
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let rest = text[text.index(after: close)...]
            bracketed = rest.isEmpty || rest.hasPrefix(":")
            host = text[text.index(after: text.startIndex)..<close]
            if rest.hasPrefix(":") { port = rest.dropFirst() }
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            port = text[text.index(after: colon)...]
            host = text[..<colon]
        }
        if text.hasPrefix("[") && (!bracketed || IPAddress(String(host))?.family != .aaaa) { host = "" }
        let validHost = IPAddress(String(host)) != nil || HostName(String(host)) != nil
        var validPort = true
        if let port { validPort = (UInt16(port) ?? 0) > 0 }
        guard validHost && validPort else {
            throw ConfigError(
                key: key,
                "'\(text)' is not an address or host name with an optional port (192.0.2.1:8080, [2001:db8::1]:8080, dns.example.com)")
        }
        return text
    }

    /// Settings of the `default` account that have an environment variable and a flag of their own.
    static let defaultAccountSettings: [Setting] = [
        Setting(
            key: "upstreams", env: "HTTPDNS_UPSTREAMS", flag: "--upstreams",
            help: "comma-separated KIND:URL upstreams of the default account (KIND json, doh, httpdns)"
        ) { config, value, name throws(ConfigError) in
            let parts = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !parts.isEmpty else { throw ConfigError(key: name, "needs at least one KIND:URL") }
            var specs: [UpstreamSpec] = []
            for part in parts { specs.append(try UpstreamSpec(parsing: part, key: name)) }
            config.accounts["default", default: AccountConfig()].upstreams = specs
        },
        Setting(
            key: "localDNSServers", env: "HTTPDNS_LOCALDNS_SERVERS", flag: "--localdns-servers",
            help: "comma-separated IP[:port] servers of the fallback resolver (default: /etc/resolv.conf)"
        ) { config, value, name throws(ConfigError) in
            let parts = value.split(separator: ",").map { String($0) }
            config.accounts["default", default: AccountConfig()].localDNSServers = try AccountConfig.validateServers(parts, key: name)
        },
        Setting(
            key: "localDNSFallback", env: "HTTPDNS_LOCALDNS_FALLBACK", flag: "--localdns-fallback",
            help: "true/false: ask the system resolver when every upstream failed (default true)"
        ) { config, value, name throws(ConfigError) in
            config.accounts["default", default: AccountConfig()].localDNSFallback = try parseBool(value, key: name)
        },
    ]

    /// What the command line asked for.
    public enum Invocation: Sendable, Equatable {
        case run(ServiceConfig)
        case help(String)
        /// `--version`: the line to print.
        case version(String)
    }

    /// Builds the configuration from `arguments` (without the program name), `environment` and
    /// the file named by `--config` / `HTTPDNS_CONFIG`, read through `readFile`.
    public static func load(
        arguments: [String], environment: [String: String], readFile: (String) throws -> Data
    ) throws(ConfigError) -> Invocation {
        var flags: [(Setting, String, String)] = []
        var configPath = environment["HTTPDNS_CONFIG"]
        var configKey = "HTTPDNS_CONFIG"
        var index = 0
        let all = settings + defaultAccountSettings
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--help" || argument == "-h" { return .help(helpText) }
            if argument == "--version" { return .version(BuildInfo.versionLine) }
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            let setting = all.first(where: { $0.flag == name })
            guard setting != nil || name == "--config" else {
                throw ConfigError(key: argument, "unknown option (see --help)")
            }
            if value == nil {
                index += 1
                guard index < arguments.count else { throw ConfigError(key: name, "needs a value") }
                value = arguments[index]
            }
            if let setting {
                flags.append((setting, value!, name))
            } else {
                configPath = value
                configKey = "--config"
            }
            index += 1
        }

        var config = ServiceConfig()
        if let configPath {
            let data: Data
            do { data = try readFile(configPath) } catch {
                throw ConfigError(key: configKey, readProblem(error, path: configPath))
            }
            config = try ServiceConfig(json: try parseJSONObject(data, key: configPath))
        }
        let declaredDefault = config.accounts["default"] != nil
        var defaultAccountNames: [String] = []
        for setting in all {
            guard let value = environment[setting.env] else { continue }
            try setting.apply(&config, value, setting.env)
            if setting.key != "upstreams" && defaultAccountSettings.contains(where: { $0.env == setting.env }) {
                defaultAccountNames.append(setting.env)
            }
        }
        for (setting, value, name) in flags {
            try setting.apply(&config, value, name)
            if defaultAccountSettings.contains(where: { $0.flag == setting.flag }) { defaultAccountNames.append(name) }
        }
        // Fallback settings alone must not conjure a `default` account out of nothing: it would
        // resolve through the public default upstreams.
        if !declaredDefault, let created = config.accounts["default"], created.upstreams == AccountConfig.publicDefaultUpstreams,
            let name = defaultAccountNames.first
        {
            throw ConfigError(
                key: name,
                "applies to the 'default' account, which the config file does not declare (declare it, or set HTTPDNS_UPSTREAMS / --upstreams too)"
            )
        }
        try config.validateListeners()
        try config.readAdminTokenFile(readFile)
        return .run(config)
    }

    /// What went wrong reading `path`: `ConfigFile.read` says it with the path; another reader's
    /// error is named after it.
    static func readProblem(_ error: any Error, path: String) -> String {
        (error as? ConfigFile.ReadError)?.description ?? "cannot read '\(path)': \(error.localizedDescription)"
    }

    /// Sets `adminToken` from `adminTokenFile`, if one is named: its text without one trailing
    /// newline (`\n` or `\r\n`), at least 8 characters. The error names the key that set the file
    /// and never holds the file's content.
    mutating func readAdminTokenFile(_ readFile: (String) throws -> Data) throws(ConfigError) {
        guard let path = adminTokenFile else { return }
        let key = adminTokenFileKey
        guard adminToken == nil else {
            throw ConfigError(key: key, "set either the admin token or a file holding it, not both")
        }
        let data: Data
        do { data = try readFile(path) } catch {
            throw ConfigError(key: key, Self.readProblem(error, path: path))
        }
        guard var token = String(data: data, encoding: .utf8) else {
            throw ConfigError(key: key, "'\(path)' is not UTF-8 text")
        }
        // "\r\n" is one Character: removing the last one removes either ending whole.
        if token.hasSuffix("\n") || token.hasSuffix("\r\n") { token.removeLast() }
        guard token.count >= 8 else { throw ConfigError(key: key, "'\(path)' holds fewer than 8 characters") }
        guard !token.contains(where: { $0.isNewline }) else {
            throw ConfigError(key: key, "'\(path)' holds more than one line")
        }
        adminToken = token
    }

    /// The service configuration from a decoded config file.
    public init(json object: [String: Any]) throws(ConfigError) {
        let reader = JSONObjectReader(object, path: "")
        try reader.checkKeys(Set(Self.settings.map(\.key)).union(["accounts"]))
        for setting in Self.settings {
            guard let raw = object[setting.key] else { continue }
            let text: String
            if let items = raw as? [Any], let applyList = setting.applyList {
                try applyList(&self, items, setting.key)
                continue
            } else if let string = raw as? String {
                text = string
            } else if setting.applyList == nil, let number = raw as? NSNumber, String(cString: number.objCType) != "c" {
                // JSONSerialization decodes true/false as NSNumber of ObjC type "c": not a number here.
                text = number.stringValue
            } else if setting.acceptsBool, let number = raw as? NSNumber, String(cString: number.objCType) == "c" {
                text = number.boolValue ? "true" : "false"
            } else {
                throw ConfigError(
                    key: setting.key,
                    setting.applyList == nil ? "must be a string or a number" : "must be an array of strings or a comma-separated string")
            }
            try setting.apply(&self, text, setting.key)
        }
        if let accounts = try reader.object("accounts") {
            guard !accounts.isEmpty else { throw ConfigError(key: "accounts", "declares no account") }
            self.accounts = [:]
            for (id, value) in accounts {
                guard Self.isValidAccountID(id) else {
                    throw ConfigError(key: "accounts.\(id)", Self.accountIDRule)
                }
                guard let body = value as? [String: Any] else { throw ConfigError(key: "accounts.\(id)", "must be a JSON object") }
                self.accounts[id] = try AccountConfig(json: body, path: "accounts.\(id)")
            }
        }
    }

    /// TLS needs both files; a plain second listener exists only beside an HTTPS one.
    func validateListeners() throws(ConfigError) {
        if tlsCertificatePath != nil && tlsKeyPath == nil {
            throw ConfigError(key: "tlsKey", "is needed with tlsCert (set both or neither)")
        }
        if tlsKeyPath != nil && tlsCertificatePath == nil {
            throw ConfigError(key: "tlsCert", "is needed with tlsKey (set both or neither)")
        }
        if listenPlain != nil && tlsCertificatePath == nil {
            throw ConfigError(
                key: "listenPlain",
                "is a plain listener beside an HTTPS one: set tlsCert and tlsKey (the main listener is plain HTTP without them)")
        }
    }

    /// Ids no account may take: they are the first segment of other routes (`/v1/...`, `/healthz`,
    /// the DoH paths), or the admin API's `accounts`, and `/{account}/...` (the EMAS API) would
    /// collide with them.
    public static let reservedAccountIDs: Set<String> = ["accounts", "v1", "resolve", "dns-query", "healthz", "readyz", "metrics"]

    /// What `isValidAccountID` checks, as the config and the admin API tell it.
    public static let accountIDRule =
        "account ids are 1-64 letters, digits, '-' or '_', and not one of the ids reserved for other routes ("
        + reservedAccountIDs.sorted().joined(separator: ", ") + ")"

    /// Account ids are 1-64 letters, digits, '-' or '_', and not one of `reservedAccountIDs`.
    public static func isValidAccountID(_ id: some StringProtocol) -> Bool {
        !id.isEmpty && !reservedAccountIDs.contains(String(id)) && id.utf8.count <= 64
            && id.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`, any case).
    static func parseBool(_ text: String, key: String) throws(ConfigError) -> Bool {
        switch text.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw ConfigError(key: key, "must be true or false")
        }
    }

    static func parseInt(_ text: String, key: String, range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw ConfigError(key: key, "must be a whole number between \(range.lowerBound) and \(range.upperBound), got '\(text)'")
        }
        return value
    }

    /// `10.0.0.0/8`, `::1/128`, or a plain address (a host route).
    static func parseCIDR(_ text: String, key: String) throws(ConfigError) -> CIDR {
        guard let cidr = CIDR(text.trimmingCharacters(in: .whitespaces)) else {
            throw ConfigError(key: key, "'\(text)' is not an IP address or a CIDR network with its host bits zero (10.0.0.0/8, ::1/128)")
        }
        return cidr
    }

    /// `127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:80`.
    static func parseListen(_ text: String, key: String) throws(ConfigError) -> (String, UInt16) {
        let host: Substring
        let port: Substring
        switch HostPort.split(text) {
        case .success(let parts): (host, port) = (parts.host, parts.port)
        case .failure(.notBracketedWithPort): throw ConfigError(key: key, "'\(text)' is not [IPv6]:port")
        case .failure(.noPort): throw ConfigError(key: key, "'\(text)' is not address:port")
        }
        guard let number = UInt16(port) else { throw ConfigError(key: key, "'\(port)' is not a port number (0-65535)") }
        guard IPAddress(String(host)) != nil else { throw ConfigError(key: key, "'\(host)' is not an IP address") }
        return (String(host), number)
    }

    public static var helpText: String {
        var lines = [
            "httpdnsd: a self-hosted HTTPDNS service",
            "",
            "usage: httpdnsd [--config FILE] [options]",
            "",
            "Settings come from the JSON file, then HTTPDNS_* environment variables, then flags.",
            "",
        ]
        func line(_ flag: String, _ help: String) -> String {
            "  " + flag.padding(toLength: 35, withPad: " ", startingAt: 0) + "  " + help
        }
        lines.append(line("--config FILE", "JSON config file (env HTTPDNS_CONFIG)"))
        for setting in settings + defaultAccountSettings {
            lines.append(line("\(setting.flag) VALUE", setting.help + " (env \(setting.env))"))
        }
        lines += [
            line("--version", "print the version and exit"),
            line("-h, --help", "this text"),
            "",
            "Accounts are declared under \"accounts\" in the file; keys of an account:",
            "  " + AccountConfig.keys.sorted().joined(separator: ", "),
            "Without a file there is one account, \"default\", whose upstreams are Alibaba Public DNS",
            "(json:https://223.5.5.5/resolve, json:https://223.6.6.6/resolve) with the system resolver as fallback.",
            "",
            "Exit codes: 0 after a clean stop (SIGTERM, SIGINT); 1 when the database cannot be opened or an",
            "address cannot be bound; 2 for a bad configuration; 3 when the database was written by a newer httpdnsd.",
        ]
        return lines.joined(separator: "\n")
    }
}
