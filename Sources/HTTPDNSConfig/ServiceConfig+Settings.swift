import Foundation
import HTTPDNSCore

/// The settings a service can be given: each one's file key, environment variable, flag, help
/// and how its value is applied.
extension ServiceConfig {
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
        Setting(
            key: "threads", env: "HTTPDNS_THREADS", flag: "--threads",
            help: "HTTP threads, each with its own upstream connections (default 0 = one per core)"
        ) {
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
            key: "dnsListen", env: "HTTPDNS_DNS_LISTEN", flag: "--dns-listen",
            help: "address:port of a plain DNS listener, UDP and TCP, answering for dnsAccount (default none)"
        ) { config, value, name throws(ConfigError) in
            let (host, port) = try parseListen(value, key: name)
            config.dnsListen = ListenAddress(host: host, port: port)
        },
        Setting(
            key: "dnsAccount", env: "HTTPDNS_DNS_ACCOUNT", flag: "--dns-account",
            help: "the account the plain DNS listener answers for (default default)"
        ) { config, value, name throws(ConfigError) in
            guard AccountID(value) != nil else { throw ConfigError(key: name, AccountID.rule) }
            config.dnsAccount = value
        },
        Setting(
            key: "dnstapSocket", env: "HTTPDNS_DNSTAP_SOCKET", flag: "--dnstap-socket",
            help: "Unix socket of a dnstap collector (Frame Streams) the query log is streamed to (default none)"
        ) { config, value, name throws(ConfigError) in
            guard value.hasPrefix("/"), value.utf8.count < 108 else {
                throw ConfigError(key: name, "must be an absolute path of at most 107 bytes (a Unix socket's), got '\(value)'")
            }
            config.dnstapSocket = value
        },
        Setting(
            key: "dotListen", env: "HTTPDNS_DOT_LISTEN", flag: "--dot-listen",
            help: "address:port of a DNS over TLS listener (e.g. 0.0.0.0:853), with the tlsCert/tlsKey certificate (default none)"
        ) { config, value, name throws(ConfigError) in
            let (host, port) = try parseListen(value, key: name)
            config.dotListen = ListenAddress(host: host, port: port)
        },
        Setting(
            key: "dotAccountDomain", env: "HTTPDNS_DOT_ACCOUNT_DOMAIN", flag: "--dot-account-domain",
            help: "DoT server name <account>.<this domain> selects the account; any other name: default (default none)"
        ) { config, value, name throws(ConfigError) in
            guard let domain = HostName(value), domain.value.contains(".") else {
                throw ConfigError(key: name, "must be a DNS name of two labels or more, such as dot.example.net")
            }
            config.dotAccountDomain = domain.value
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
            key: "geoDatabase", env: "HTTPDNS_GEO_DATABASE", flag: "--geo-database",
            help: "MaxMind DB file (GeoLite2/DB-IP City or Country) of the rules' countries and regions; reloaded on SIGHUP (default none)"
        ) { config, value, name throws(ConfigError) in
            guard !value.isEmpty else { throw ConfigError(key: name, "must not be empty") }
            config.geoDatabasePath = value
        },
        Setting(
            key: "asnDatabase", env: "HTTPDNS_ASN_DATABASE", flag: "--asn-database",
            help: "MaxMind DB file (GeoLite2/DB-IP ASN) of the rules' asns; reloaded on SIGHUP (default none)"
        ) { config, value, name throws(ConfigError) in
            guard !value.isEmpty else { throw ConfigError(key: name, "must not be empty") }
            config.asnDatabasePath = value
        },
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
}
