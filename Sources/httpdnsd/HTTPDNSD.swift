import Foundation
import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSStore
import HTTPDNSUpstream

/// The executable: reads the configuration, wires store, upstreams, engines and the HTTP front,
/// loads the cache back, serves until SIGTERM/SIGINT, then drains, flushes and exits 0.
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
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

        let config: ServiceConfig
        do {
            switch try ServiceConfig.load(
                arguments: Array(CommandLine.arguments.dropFirst()),
                environment: ProcessInfo.processInfo.environment,
                readFile: { try Data(contentsOf: URL(fileURLWithPath: $0)) })
            {
            case .help(let text):
                print(text)
                exit(0)
            case .run(let loaded):
                config = loaded
            }
        } catch {
            fail("configuration error: \(error)", code: 2)
        }
        if let arenas = MemoryTrim.limitArenas(httpThreads: HTTPServerOptions.workerThreads(configured: config.threads)) {
            Log.info("malloc: at most \(arenas) arenas (set MALLOC_ARENA_MAX to choose)")
        }

        let store: SQLiteStore
        do {
            store = try SQLiteStore(path: config.databasePath)
        } catch {
            fail("cannot open the database: \(error)", code: 1)
        }
        var accounts = config.accounts
        do {
            for (id, json) in try store.loadAccounts().sorted(by: { $0.key < $1.key }) {
                guard let json else {
                    accounts.removeValue(forKey: id)
                    continue
                }
                let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]
                accounts[id] = try AccountConfig(json: object, path: "database account \(id)")
            }
        } catch {
            fail("cannot load the accounts stored in \(config.databasePath): \(error)", code: 1)
        }

        let wiring = UpstreamWiring()
        let registry = AccountRegistry { id, account in
            ResolverEngine(
                accountID: id, config: account, clock: SystemClock(), persistence: store, speedTester: wiring.speedTester,
                makeChain: wiring.chain)
        }
        for (id, account) in accounts.sorted(by: { $0.key < $1.key }) {
            registry.upsert(id, config: account)
            let fallback = account.localDNSFallback
                ? (account.localDNSServers.isEmpty ? "system resolver (/etc/resolv.conf)" : account.localDNSServers.joined(separator: ","))
                : "off"
            Log.info("account \(id): upstreams \(account.upstreams.map(\.description).joined(separator: ", ")); fallback \(fallback)")
        }

        let service = HTTPDNSService(
            registry: registry, accountStore: store, adminToken: config.adminToken,
            limits: .init(
                maxPreloadHosts: config.maxPreloadHosts, preloadConcurrency: config.preloadConcurrency,
                trustedProxies: config.trustedProxies))
        service.addMetricsSource { StoreMetrics.render(store) }
        let server = HTTPServer(
            options: HTTPServerOptions(
                host: config.listenHost, port: config.listenPort, threads: config.threads,
                connectionLimit: config.connectionLimit, perIPConnectionLimit: config.perIPConnectionLimit,
                connectionTimeout: config.connectionTimeout, connectionMemoryLimit: config.connectionMemoryLimit,
                maxBodyBytes: config.maxBodyBytes),
            fastHandler: service.fastResponse, handler: service.handle)
        service.attach(server.metrics)
        let port: UInt16
        do {
            port = try server.start()
        } catch {
            fail("\(error)", code: 1)
        }
        let listen = config.listenHost.contains(":") ? "[\(config.listenHost)]:\(port)" : "\(config.listenHost):\(port)"
        Log.info("httpdnsd listening on \(listen) (database \(config.databasePath), admin API \(config.adminToken == nil ? "disabled" : "enabled"))")
        if !isLoopback(config.listenHost) {
            for engine in registry.all where engine.config.clientKeys.isEmpty {
                Log.warning("account \(engine.accountID) has no clientKeys: anyone who can reach \(listen) may use it (see Security in README)")
            }
        }

        warmLoad(registry: registry, store: store)
        MemoryTrim.afterBulkWork()
        let prefetch = PrefetchScheduler(registry: registry)
        service.isReady = true

        var received: Int32 = 0
        sigwait(&stopSignals, &received)
        Log.info("received \(received == SIGTERM ? "SIGTERM" : "SIGINT"): stopping (no new connections, finishing requests in flight)")
        service.isReady = false
        prefetch.stop()
        server.quiesce()
        server.stop(grace: 10)
        store.close()
        wiring.shutdown()
        Log.info("stopped cleanly (cache flushed to \(config.databasePath))")
        exit(0)
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
                Log.info("account \(engine.accountID): loaded \(entries.count) cached answers in \(Int((SystemClock().now() - started) * 1000)) ms")
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

    static func fail(_ message: String, code: Int32) -> Never {
        Log.error(message)
        exit(code)
    }
}
