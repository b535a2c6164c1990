import Foundation
import HTTPDNSCore
import HTTPDNSRedis
import HTTPDNSServer
import HTTPDNSStore
import HTTPDNSUpstream

/// The executable: reads the configuration, wires store, upstreams, engines and the HTTP front,
/// loads the cache back, serves until SIGTERM/SIGINT, then drains, flushes and exits 0. SIGHUP
/// reloads the TLS certificate.
@main
enum HTTPDNSD {
    static func main() {
        signal(SIGPIPE, SIG_IGN)
        // Block the stop signals in every thread (threads inherit the mask); main waits for them.
        // A parent may have left them ignored, and an ignored signal never reaches sigwait.
        signal(SIGTERM, SIG_DFL)
        signal(SIGINT, SIG_DFL)
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGTERM)
        sigaddset(&stopSignals, SIGINT)
        signal(SIGHUP, SIG_DFL)
        sigaddset(&stopSignals, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

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

        var certificates: TLSCertificateStore?
        if let certificatePath = config.tlsCertificatePath, let keyPath = config.tlsKeyPath {
            do {
                certificates = try TLSCertificateStore(certificatePath: certificatePath, keyPath: keyPath)
            } catch {
                fail("configuration error: \(error)", code: 2)
            }
        }
        raiseOpenFileLimit(needed: config.connectionLimit * (config.listenPlain == nil ? 1 : 2) + 256)

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
        // The file's accounts (version 0), overlaid by the database's rows: bare configurations
        // and deletions written without Redis (version 0), records written by replication.
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
        var accounts: [String: AccountConfig] = [:]
        for record in records { accounts[record.id] = record.config }

        let wiring = UpstreamWiring()
        // Redis (docs/redis.md): only when `redis` is set; its connections are made on first use.
        let redis = config.redis.map {
            RedisClient(url: $0, prefix: config.redisPrefix, timeoutMilliseconds: config.redisTimeoutMilliseconds)
        }
        let sharedTier = redis.map { RedisAnswerTier(client: $0) }
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

        let service = HTTPDNSService(
            registry: registry, accountStore: store, adminToken: config.adminToken,
            limits: .init(
                maxPreloadHosts: config.maxPreloadHosts, preloadConcurrency: config.preloadConcurrency,
                trustedProxies: config.trustedProxies, separateOpsListener: config.opsListen != nil,
                advertisedAddresses: config.effectiveAdvertisedAddresses,
                clientRate: .init(perSecond: config.rateLimit, burst: config.rateBurst),
                metricsAccounts: config.metricsAccounts, requestDurations: config.metricsHistograms,
                clientKeying: ClientKeying(ipv6PrefixLength: config.clientIPv6PrefixLength)))
        service.addMetricsSource { StoreMetrics.emit(store, into: &$0) }
        service.addMetricsSource { ProcessMetrics.emit(into: &$0) }
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
        let main = ListenAddress(host: config.listenHost, port: config.listenPort)
        let server = HTTPServer(
            options: serverOptions(config, main, .main, tls: certificates),
            fastHandler: service.fastResponse, handler: service.handle)
        service.attach(server.metrics)
        var servers: [(name: String, server: HTTPServer)] = [("main", server)]
        if let plain = config.listenPlain {
            let plainServer = HTTPServer(
                options: serverOptions(config, plain, .main, tls: nil), fastHandler: service.fastResponse, handler: service.handle)
            servers.append(("plain", plainServer))
        }
        if let ops = config.opsListen {
            servers.append(("ops", HTTPServer(options: serverOptions(config, ops, .ops, tls: nil), handler: service.handle)))
        }
        let listeners = servers
        service.addMetricsSource { ConnectionMetrics.emit(listeners, into: &$0) }
        var bound: [String] = []
        for (name, listener) in servers {
            let address = name == "main" ? main : name == "plain" ? config.listenPlain! : config.opsListen!
            do {
                let port = try listener.start()
                let at = ListenAddress(host: address.host, port: port)
                switch name {
                case "main": bound.append("\(at)\(listener.isTLS ? " (HTTPS)" : "")")
                case "plain": bound.append("plain HTTP on \(at)")
                default: bound.append("operations on \(at)")
                }
            } catch {
                fail("\(name) listener: \(error)", code: 1)
            }
        }
        Log.info(
            "httpdnsd listening on \(bound.joined(separator: ", ")) (database \(config.databasePath), admin API \(config.adminToken == nil ? "disabled" : "enabled"))"
        )
        if let certificates {
            let (serial, notAfter) = certificates.current
            Log.info(
                "TLS: serving certificate serial \(serial), expires at \(Log.utcTime(unixSeconds: notAfter)); reloaded on SIGHUP and when \(certificates.certificatePath) or \(certificates.keyPath) change"
            )
            certificates.startWatching(interval: 5)
        }
        // Public listeners: the main one and the plain one beside it (the ops listener serves no account).
        let exposed = ([main] + (config.listenPlain.map { [$0] } ?? [])).filter { !isLoopback($0.host) }
        if !exposed.isEmpty {
            let reach = exposed.map(\.description).joined(separator: " or ")
            for engine in registry.all where engine.config.clientKeys.isEmpty {
                Log.warning(
                    "account \(engine.accountID) has no clientKeys: anyone who can reach \(reach) may use it (see docs/security.md)")
            }
        }

        warmLoad(registry: registry, store: store)
        MemoryTrim.afterBulkWork()
        let prefetch = PrefetchScheduler(registry: registry)
        UpstreamProbe.run(accounts: accounts.sorted(by: { $0.key < $1.key }).map { (id: $0.key, config: $0.value) }, wiring: wiring)
        service.isReady = true
        SystemdNotify.send("READY=1")

        var received: Int32 = 0
        while true {
            sigwait(&stopSignals, &received)
            guard received == SIGHUP else { break }
            if let certificates {
                certificates.reload(reason: "SIGHUP")
            } else {
                Log.info("received SIGHUP: no TLS certificate to reload")
            }
        }
        // Not ready at once, still serving for the drain, so load balancers take the instance out
        // before a connection is refused; a second SIGTERM/SIGINT ends the drain early.
        service.isReady = false
        SystemdNotify.send("STOPPING=1")
        Log.info(
            "received \(received == SIGTERM ? "SIGTERM" : "SIGINT"): /readyz answers 503; still serving for \(config.shutdownDrain) s (shutdownDrain)"
        )
        drain(seconds: config.shutdownDrain, signals: stopSignals)
        Log.info("stopping: no new connections, finishing requests in flight")
        prefetch.stop()
        certificates?.stopWatching()
        for (_, listener) in servers { listener.quiesce() }
        for (_, listener) in servers { listener.stop(grace: 10) }
        store.close()
        wiring.shutdown()
        replication?.shutdown()
        redis?.shutdown()
        Log.info("stopped cleanly (cache flushed to \(config.databasePath))")
        LogSink.shared.stop()
        exit(0)
    }

    /// Waits `seconds` (the drain), or until SIGTERM or SIGINT comes again; SIGHUP is ignored then.
    static func drain(seconds: Double, signals: sigset_t) {
        var signals = signals
        let deadline = DrainDeadline(seconds: seconds)
        while let remaining = deadline.remaining() {
            var timeout = timespec(tv_sec: Int(remaining), tv_nsec: Int((remaining - remaining.rounded(.down)) * 1e9))
            let signal = sigtimedwait(&signals, nil, &timeout)
            if signal == SIGTERM || signal == SIGINT {
                Log.info("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT") again: ending the drain")
                return
            }
        }
    }

    /// Puts each persistent account's stored cache back, dropping entries expired for longer than
    /// its `discardRecordsHasExpiredFor`; younger expired entries come back as stale.
    static func warmLoad(registry: AccountRegistry, store: SQLiteStore) {
        do {
            let known = Set(registry.ids)
            for account in try store.cachedAccounts() where !known.contains(account) {
                store.removeAll(account: account)
                Log.info("account \(account) no longer exists: its persisted cache is dropped")
            }
        } catch {
            Log.error("could not list the persisted caches: \(error)")
        }
        for engine in registry.all where !engine.config.persistentCacheIPEnabled {
            store.removeAll(account: engine.accountID)
        }
        for engine in registry.all where engine.config.persistentCacheIPEnabled {
            let started = SystemClock().now()
            do {
                let entries = try store.loadCache(
                    account: engine.accountID, now: started,
                    discardExpiredOlderThan: engine.config.discardRecordsHasExpiredFor, keepExpired: true)
                engine.restore(entries)
                Log.info(
                    "account \(engine.accountID): loaded \(entries.count) cached answers in \(Int((SystemClock().now() - started) * 1000)) ms"
                )
            } catch {
                Log.error("account \(engine.accountID): could not load the cache: \(error) (starting cold)")
            }
        }
    }

    /// Whether `host` is a loopback address (127.0.0.0/8, ::1).
    static func isLoopback(_ host: String) -> Bool {
        guard let address = IPAddress(host) else { return false }
        return address.family == .a ? address.bytes[0] == 127 : address.bytes == [UInt8](repeating: 0, count: 15) + [1]
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

    static func fail(_ message: String, code: Int32) -> Never {
        Log.error(message)
        LogSink.shared.stop()
        exit(code)
    }

    /// A monotonic deadline `seconds` from now.
    struct DrainDeadline {
        let end: Double

        init(seconds: Double) { end = Self.now() + seconds }

        /// Seconds left, nil once passed.
        func remaining() -> Double? {
            let left = end - Self.now()
            return left > 0 ? left : nil
        }

        static func now() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
    }
}
