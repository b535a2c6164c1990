import Foundation
import HTTPDNSConfig
import HTTPDNSCore
import HTTPDNSGeo
import HTTPDNSLoop
import HTTPDNSRedis
import HTTPDNSServer
import HTTPDNSStore
import HTTPDNSTap
import HTTPDNSUpstream

/// The composition root: the configuration, then the store, the upstreams, the engines, the
/// HTTP service and its listeners (not yet started). Every step that cannot go on exits with the
/// code the documentation gives (2 configuration, 3 newer database, 1 other).
extension HTTPDNSD {
    /// What `build` wires together, for `serve` and `shutdown`.
    struct Daemon {
        let config: ServiceConfig
        let certificates: TLSCertificateStore?
        /// `geoDatabase` and `asnDatabase`, reopened on SIGHUP; nil when neither is set.
        let geo: GeoDatabases?
        let store: SQLiteStore
        /// The query log's file (`<database>.querylog`), drained from the service's queue.
        let queryLog: QueryLogStore
        /// The query log's dnstap stream (`dnstapSocket`), closed after the log.
        let dnstap: DnstapWriter?
        /// The accounts at start-up (file overlaid by the database), by id.
        let accounts: [String: AccountConfig]
        let wiring: UpstreamWiring
        let redis: RedisClient?
        let replication: RedisSharedAccounts?
        let registry: AccountRegistry
        let service: HTTPDNSService
        /// main, then plain and ops when configured.
        let servers: [(name: String, server: HTTPServer)]
        /// The main listener's configured address.
        let main: ListenAddress
        /// The plain DNS listener (`dnsListen`), not started.
        let dns: PlainDNSServer?
        /// The DNS over TLS listener (`dotListen`), not started.
        let dot: DoTServer?
        /// Samples each account's last hour (`GET /v1/{account}/stats/recent`).
        let activity: ActivitySampler
    }

    /// Reads the configuration (arguments, environment, file), prints and exits for `--help` and
    /// `--version`, then sets up the log and malloc's arenas.
    static func loadConfiguration() -> ServiceConfig {
        let config: ServiceConfig
        do {
            switch try ServiceConfig.load(
                arguments: Array(CommandLine.arguments.dropFirst()),
                environment: ProcessInfo.processInfo.environment,
                readFile: { path throws in try ConfigFile.read(path) })
            {
            case .help(let text), .version(let text):
                print(text)
                exit(0)
            case .run(let loaded):
                config = loaded
            }
        } catch {
            fail("configuration error: \(error)", code: 2)
        }
        Log.configure(level: config.logLevel, format: config.logFormat)
        // From here on access-log lines go through the log's own thread (no HTTP thread waits on
        // stderr). Without the access log nothing would ever go through it, and an idle thread
        // started this early takes the second malloc arena ahead of the threads that allocate
        // (see MemoryTrim.limitArenas): the curl loop that makes every cache entry then shared
        // the first arena with the HTTP threads and their request buffers.
        if config.accessLog { LogSink.shared.start() }
        switch MemoryTrim.limitArenas(httpThreads: HTTPServerOptions.workerThreads(configured: config.threads)) {
        case .applied(let arenas): Log.info("malloc: at most \(arenas) arenas (set MALLOC_ARENA_MAX to choose)")
        case .refused(let arenas):
            Log.warning(
                "malloc: mallopt(M_ARENA_MAX, \(arenas)) refused (an allocator other than glibc's, such as a sanitizer's): arenas are not capped"
            )
        case .chosenByEnvironment: break
        }
        return config
    }

    /// Wires everything `config` describes; starts no listener.
    static func build(_ config: ServiceConfig) -> Daemon {
        var certificates: TLSCertificateStore?
        if let certificatePath = config.tlsCertificatePath, let keyPath = config.tlsKeyPath {
            do {
                certificates = try TLSCertificateStore(certificatePath: certificatePath, keyPath: keyPath)
            } catch {
                fail("configuration error: \(error)", code: 2)
            }
        }
        var geo: GeoDatabases?
        if config.geoDatabasePath != nil || config.asnDatabasePath != nil {
            do throws(ConfigError) {
                geo = try GeoDatabases(geoPath: config.geoDatabasePath, asnPath: config.asnDatabasePath)
            } catch {
                fail("configuration error: \(error)", code: 2)
            }
        }
        raiseOpenFileLimit(needed: config.connectionLimit * (config.listenPlain == nil ? 1 : 2) + 256)
        let (store, records) = openStore(config)
        var accounts: [String: AccountConfig] = [:]
        for record in records { accounts[record.id] = record.config }

        let wiring = UpstreamWiring()
        // Redis (docs/redis.md): only when `redis` is set; its connections are made on first use.
        let redis = config.redis.map {
            RedisClient(url: $0, prefix: config.redisPrefix, timeoutMilliseconds: config.redisTimeoutMilliseconds)
        }
        let sharedTier = redis.map { RedisAnswerTier(client: $0) }
        let registry = makeRegistry(accounts: accounts, store: store, wiring: wiring, redis: redis, sharedTier: sharedTier)
        let service = makeService(config, registry: registry, store: store, geo: geo)
        if let redis { service.addMetricsSource { RedisMetricsText.emit(redis.metrics, into: &$0) } }
        // Accounts and cache changes shared with the other replicas (docs/replicas.md): admin
        // changes go to Redis first; the replicator reconciles on every connect.
        let replication = redis.map { client in
            let replicator = AccountReplicator(
                records: records, registry: registry, localStore: store, preloadConcurrency: config.preloadConcurrency)
            service.setReplication(replicator)
            return RedisSharedAccounts(client: client, replicator: replicator)
        }
        service.setStoreHealth { store.health }
        let (queryLog, dnstap) = openQueryLog(config, service: service)
        let main = ListenAddress(host: config.listenHost, port: config.listenPort)
        let servers = makeServers(
            config, main: main, service: service, certificates: certificates, wiring: wiring, sharedTier: sharedTier)
        // One set of DNS query counters for both DNS listeners (each under its own protocol).
        let dnsMetrics = PlainDNSMetrics()
        if config.dnsListen != nil || config.dotListen != nil { service.addMetricsSource { dnsMetrics.emit(into: &$0) } }
        let dns = config.dnsListen.map { address in
            PlainDNSServer(
                options: PlainDNSServer.Options(host: address.host, port: address.port, account: config.dnsAccount), service: service,
                metrics: dnsMetrics)
        }
        let dot = makeDoT(config, service: service, certificates: certificates, dnsMetrics: dnsMetrics)
        return Daemon(
            config: config, certificates: certificates, geo: geo, store: store, queryLog: queryLog, dnstap: dnstap, accounts: accounts,
            wiring: wiring, redis: redis,
            replication: replication, registry: registry, service: service, servers: servers, main: main, dns: dns, dot: dot,
            activity: ActivitySampler(registry: registry))
    }

    /// The DoT listener (`dotListen`) with the HTTPS listener's certificate store and the HTTP
    /// listeners' connection limits and timeouts; nil without `dotListen`.
    static func makeDoT(
        _ config: ServiceConfig, service: HTTPDNSService, certificates: TLSCertificateStore?, dnsMetrics: PlainDNSMetrics
    ) -> DoTServer? {
        guard let address = config.dotListen, let certificates else { return nil }
        var options = DoTServer.Options(host: address.host, port: address.port, accountDomain: config.dotAccountDomain)
        options.idleTimeout = Double(config.connectionTimeout)
        options.readTimeout = Double(config.requestReadTimeout)
        options.connectionLimit = config.connectionLimit
        options.perAddressLimit = config.perIPConnectionLimit
        options.keying = ClientKeying(ipv6PrefixLength: config.clientIPv6PrefixLength)
        options.accessLog = config.accessLog
        do {
            let server = try DoTServer(options: options, service: service, certificates: certificates, dnsMetrics: dnsMetrics)
            service.addMetricsSource { server.metrics.emit(into: &$0) }
            return server
        } catch {
            fail("DoT listener: \(error)", code: 1)
        }
    }

    /// Opens the query log's file beside the database (`<database>.querylog`), and its dnstap
    /// stream with `dnstapSocket`, and lets the service log into it and read it back
    /// (`/v1/{account}/querylog`, `/metrics`).
    static func openQueryLog(_ config: ServiceConfig, service: HTTPDNSService) -> (QueryLogStore, DnstapWriter?) {
        let path = config.databasePath + ".querylog"
        var dnstap: DnstapWriter?
        if let socket = config.dnstapSocket {
            do {
                dnstap = try DnstapWriter(socketPath: socket, identity: hostName(), version: "httpdnsd \(BuildInfo.version)")
            } catch {
                fail("dnstapSocket: cannot stream to '\(socket)': \(error)", code: 1)
            }
            Log.info("dnstap: streaming the query log to '\(socket)'")
        }
        let store: QueryLogStore
        do {
            store = try QueryLogStore(path: path, entries: service.queryLog, tap: dnstap)
        } catch {
            fail("cannot open the query log '\(path)': \(error)", code: 1)
        }
        service.setQueryLogReader(store)
        let queue = service.queryLog
        service.addMetricsSource { [dnstap] in QueryLogMetrics.emit(queue, store, dnstap: dnstap, into: &$0) }
        return (store, dnstap)
    }

    /// This machine's name (`gethostname`), dnstap's identity of the stream; "httpdnsd" without one.
    static func hostName() -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "httpdnsd" }
        let name = String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
        return name.isEmpty ? "httpdnsd" : name
    }

    /// Opens the database and reads the accounts: the file's (version 0), overlaid by the
    /// database's rows (bare configurations and deletions written without Redis, version 0;
    /// records written by replication).
    static func openStore(_ config: ServiceConfig) -> (SQLiteStore, [AccountRecord]) {
        let store: SQLiteStore
        do {
            store = try SQLiteStore(path: config.databasePath, maxPendingChanges: config.storeMaxPendingChanges)
        } catch  where error.code == .newerSchema {
            // Not a fault to retry: a downgrade. Say what to do, with its own exit code.
            fail(
                "the database \(config.databasePath) was written by a newer httpdnsd (\(error.message)): run that version, or move the file away to start with an empty database",
                code: 3)
        } catch {
            fail("cannot open the database: \(error)", code: 1)
        }
        if let damaged = store.damagedAtStartUp {
            // One line naming both files: the damaged one is kept, the service goes on without its accounts.
            let redisToo = config.redis == nil ? "" : ", and those Redis holds once it answers"
            Log.error(
                "store: the database '\(damaged.path)' is damaged (\(damaged.reason)): moved to '\(damaged.movedTo)', where it is kept; "
                    + "started with a new database and the \(config.accounts.count) accounts of the configuration\(redisToo) "
                    + "(accounts only that file held are not loaded; the persisted cache starts empty)")
        }
        var records = config.accounts.sorted(by: { $0.key < $1.key }).map { AccountRecord(id: $0.key, version: 0, config: $0.value) }
        do {
            for (id, json) in try store.loadAccounts().sorted(by: { $0.key < $1.key }) {
                records.append(
                    try json.map { json throws(ConfigError) in try AccountRecord.stored(id: id, json: json) }
                        ?? AccountRecord(id: id, version: 0, config: nil))
            }
        } catch {
            fail("cannot load the accounts stored in \(config.databasePath): \(error)", code: 1)
        }
        return (store, records)
    }

    /// One engine per account, sharing the store, the upstream wiring and Redis's answer tier;
    /// logs each account's upstreams and fallback.
    static func makeRegistry(
        accounts: [String: AccountConfig], store: SQLiteStore, wiring: UpstreamWiring, redis: RedisClient?,
        sharedTier: RedisAnswerTier?
    ) -> AccountRegistry {
        if let redis {
            Log.info("redis: sharing answers through \(redis.url) (prefix \(redis.keys.prefix), timeout \(redis.timeoutMilliseconds) ms)")
        }
        let registry = AccountRegistry { id, account in
            ResolverEngine(
                accountID: id, config: account, clock: SystemClock(), persistence: store, speedTester: wiring.speedTester,
                sharedTier: sharedTier, makeChain: wiring.chain)
        }
        registry.upsert(contentsOf: accounts.map { (id: $0.key, config: $0.value) })
        for (id, account) in accounts.sorted(by: { $0.key < $1.key }) {
            let fallback =
                account.localDNSFallback
                ? (account.localDNSServers.isEmpty ? "system resolver (/etc/resolv.conf)" : account.localDNSServers.joined(separator: ","))
                : "off"
            Log.info("account \(id): upstreams \(account.upstreams.map(\.description).joined(separator: ", ")); fallback \(fallback)")
        }
        return registry
    }

    /// The HTTP service with the configuration's limits, and the store's and the process's metrics.
    static func makeService(_ config: ServiceConfig, registry: AccountRegistry, store: SQLiteStore, geo: GeoDatabases?) -> HTTPDNSService {
        var limits = HTTPDNSService.Limits(
            maxPreloadHosts: config.maxPreloadHosts, preloadConcurrency: config.preloadConcurrency,
            trustedProxies: config.trustedProxies, separateOpsListener: config.opsListen != nil,
            advertisedAddresses: config.effectiveAdvertisedAddresses,
            clientRate: .init(perSecond: config.rateLimit, burst: config.rateBurst),
            metricsAccounts: config.metricsAccounts, requestDurations: config.metricsHistograms,
            clientKeying: ClientKeying(ipv6PrefixLength: config.clientIPv6PrefixLength))
        limits.geo = geo
        let service = HTTPDNSService(registry: registry, accountStore: store, adminToken: config.adminToken, limits: limits)
        service.addMetricsSource { StoreMetrics.emit(store, into: &$0) }
        service.addMetricsSource { ProcessMetrics.emit(into: &$0) }
        return service
    }

    /// The listeners (main; plain and ops when configured), not started, and their connection
    /// metrics on the service.
    static func makeServers(
        _ config: ServiceConfig, main: ListenAddress, service: HTTPDNSService, certificates: TLSCertificateStore?,
        wiring: UpstreamWiring, sharedTier: RedisAnswerTier?
    ) -> [(name: String, server: HTTPServer)] {
        var mainOptions = serverOptions(config, main, .main, tls: certificates)
        carryGuests(&mainOptions, wiring: wiring, sharedTier: sharedTier)
        let server = HTTPServer(options: mainOptions, fastHandler: service.fastPath, handler: service.handle)
        service.attach(server.metrics)
        var servers: [(name: String, server: HTTPServer)] = [("main", server)]
        if let plain = config.listenPlain {
            var plainOptions = serverOptions(config, plain, .main, tls: nil)
            carryGuests(&plainOptions, wiring: wiring, sharedTier: sharedTier)
            let plainServer = HTTPServer(options: plainOptions, fastHandler: service.fastPath, handler: service.handle)
            servers.append(("plain", plainServer))
        }
        if let ops = config.opsListen {
            servers.append(("ops", HTTPServer(options: serverOptions(config, ops, .ops, tls: nil), handler: service.handle)))
        }
        let listeners = servers
        service.addMetricsSource { ConnectionMetrics.emit(listeners, into: &$0) }
        return servers
    }

    /// What the HTTP threads of a listener carry (docs/development.md#which-thread-does-what):
    /// the upstream HTTP/1.1 client, and with Redis the answer tier's connection, so that a
    /// miss's shared-tier lookup and store go out and come back on the thread that holds the
    /// request.
    static func carryGuests(_ options: inout HTTPServerOptions, wiring: UpstreamWiring, sharedTier: RedisAnswerTier?) {
        wiring.carryUpstreamClient(&options)
        guard let sharedTier, let upstreamClient = options.loopGuest else { return }
        options.loopGuest = { sockets in
            let client = upstreamClient(sockets)
            guard let redis = sharedTier.localConnection(on: sockets) else { return client }
            return LoopGuestGroup([client, redis])
        }
    }

    static func serverOptions(_ config: ServiceConfig, _ address: ListenAddress, _ listener: Listener, tls: TLSCertificateStore?)
        -> HTTPServerOptions
    {
        var options = HTTPServerOptions(
            host: address.host, port: address.port, threads: listener == .ops ? 1 : config.threads,
            connectionLimit: config.connectionLimit, perIPConnectionLimit: config.perIPConnectionLimit,
            connectionTimeout: config.connectionTimeout, connectionMemoryLimit: config.connectionMemoryLimit,
            maxBodyBytes: config.maxBodyBytes)
        options.listener = listener
        options.requestReadTimeout = config.requestReadTimeout
        options.trustedProxies = config.trustedProxies
        options.clientKeying = ClientKeying(ipv6PrefixLength: config.clientIPv6PrefixLength)
        options.tls = tls
        options.accessLog = config.accessLog
        return options
    }

    /// Raises the soft limit of open files to the hard one (every connection is a descriptor);
    /// warns when even the hard limit is below `needed`.
    static func raiseOpenFileLimit(needed: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        if limit.rlim_cur != rlim_t.max && limit.rlim_cur < rlim_t(needed) {
            Log.warning(
                "open files limit is \(limit.rlim_cur), below the \(needed) that connectionLimit needs: connections beyond it fail at accept (raise `ulimit -n`)"
            )
        }
    }
}
