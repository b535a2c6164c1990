import Foundation
import HTTPDNSConfig
import HTTPDNSCore
import HTTPDNSGeo
import HTTPDNSRedis
import HTTPDNSServer
import HTTPDNSStore
import HTTPDNSUpstream

/// The executable: reads the configuration, wires store, upstreams, engines and the HTTP front
/// (`build`, in HTTPDNSD+Build.swift), loads the cache back and serves until SIGTERM/SIGINT
/// (`serve`), then drains, flushes and exits 0 (`shutdown`). SIGHUP reloads the TLS certificate.
@main
enum HTTPDNSD {
    static func main() {
        signal(SIGPIPE, SIG_IGN)
        let stopSignals = blockStopSignals()
        let daemon = build(loadConfiguration())
        let prefetch = serve(daemon)
        let received = waitForStop(stopSignals, certificates: daemon.certificates, geo: daemon.geo)
        shutdown(daemon, prefetch: prefetch, received: received, signals: stopSignals)
    }

    /// Blocks SIGTERM, SIGINT and SIGHUP in every thread (threads inherit the mask, so this runs
    /// before any starts); main waits for them. A parent may have left them ignored, and an
    /// ignored signal never reaches sigwait.
    static func blockStopSignals() -> sigset_t {
        signal(SIGTERM, SIG_DFL)
        signal(SIGINT, SIG_DFL)
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGTERM)
        sigaddset(&stopSignals, SIGINT)
        signal(SIGHUP, SIG_DFL)
        sigaddset(&stopSignals, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        return stopSignals
    }

    /// Starts the listeners, loads the cache back, starts prefetching and probes the upstreams,
    /// then reports ready (`/readyz`, systemd). Returns the prefetch scheduler, for `shutdown`.
    static func serve(_ daemon: Daemon) -> PrefetchScheduler {
        let config = daemon.config
        startListeners(daemon)
        if let certificates = daemon.certificates {
            let (serial, notAfter) = certificates.current
            Log.info(
                "TLS: serving certificate serial \(serial), expires at \(Log.utcTime(unixSeconds: notAfter)); reloaded on SIGHUP and when \(certificates.certificatePath) or \(certificates.keyPath) change"
            )
            certificates.startWatching(interval: 5)
        }
        // Public listeners: the main one and the plain one beside it (the ops listener serves no account).
        let exposed = ([daemon.main] + (config.listenPlain.map { [$0] } ?? [])).filter { !isLoopback($0.host) }
        if !exposed.isEmpty {
            let reach = exposed.map(\.description).joined(separator: " or ")
            for engine in daemon.registry.all where engine.config.clientKeys.isEmpty {
                Log.warning(
                    "account \(engine.accountID) has no clientKeys: anyone who can reach \(reach) may use it (see docs/security.md)")
            }
        }

        warmLoad(registry: daemon.registry, store: daemon.store)
        MemoryTrim.afterBulkWork()
        let prefetch = PrefetchScheduler(registry: daemon.registry)
        UpstreamProbe.run(
            accounts: daemon.accounts.sorted(by: { $0.key < $1.key }).map { (id: $0.key, config: $0.value) }, wiring: daemon.wiring)
        daemon.service.isReady = true
        SystemdNotify.send("READY=1")
        return prefetch
    }

    /// Binds every listener (exiting 1 when one cannot) and logs where the service listens.
    static func startListeners(_ daemon: Daemon) {
        let config = daemon.config
        var bound: [String] = []
        for (name, listener) in daemon.servers {
            let address = name == "main" ? daemon.main : name == "plain" ? config.listenPlain! : config.opsListen!
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
        if let dns = daemon.dns {
            do {
                let port = try dns.start()
                let at = ListenAddress(host: dns.options.host, port: port)
                bound.append("plain DNS (UDP and TCP) on \(at) for account \(dns.options.account)")
            } catch {
                fail("plain DNS listener: \(error)", code: 1)
            }
            if daemon.registry.engine(dns.options.account) == nil {
                Log.warning(
                    "dnsAccount: account \(dns.options.account) does not exist (yet): plain DNS queries are REFUSED until it is created")
            }
        }
        if let dot = daemon.dot { bound.append(startDoT(dot, registry: daemon.registry)) }
        Log.info(
            "httpdnsd listening on \(bound.joined(separator: ", ")) (database \(config.databasePath), admin API \(config.adminToken == nil ? "disabled" : "enabled"))"
        )
    }

    /// Starts the DoT listener (exiting 1 when it cannot bind) and returns where it listens;
    /// warns when the `default` account, which names outside `dotAccountDomain` get, is missing.
    static func startDoT(_ dot: DoTServer, registry: AccountRegistry) -> String {
        let at: ListenAddress
        do {
            at = ListenAddress(host: dot.options.host, port: try dot.start())
        } catch {
            fail("DoT listener: \(error)", code: 1)
        }
        if registry.engine(DoTServer.defaultAccount) == nil {
            Log.warning("DoT: account default does not exist (yet): DoT queries with no account in their server name are REFUSED")
        }
        let domain = dot.options.accountDomain.map { "accounts by server name <account>.\($0), else default" } ?? "account default"
        return "DNS over TLS on \(at) (\(domain))"
    }

    /// Reopens `geoDatabase` and `asnDatabase` (SIGHUP); a file that cannot be read keeps the one in use.
    static func reload(_ geo: GeoDatabases) {
        let failures = geo.reload()
        for failure in failures { Log.error("SIGHUP: \(failure); the database in use is kept") }
        if failures.isEmpty {
            Log.info("SIGHUP: reopened \([geo.geoPath, geo.asnPath].compactMap { $0 }.joined(separator: " and "))")
        }
    }

    /// Waits for SIGTERM or SIGINT and returns it; reloads the TLS certificate and the geo
    /// databases on every SIGHUP.
    static func waitForStop(_ stopSignals: sigset_t, certificates: TLSCertificateStore?, geo: GeoDatabases?) -> Int32 {
        var signals = stopSignals
        var received: Int32 = 0
        while true {
            sigwait(&signals, &received)
            guard received == SIGHUP else { return received }
            if let certificates {
                certificates.reload(reason: "SIGHUP")
            } else {
                Log.info("received SIGHUP: no TLS certificate to reload")
            }
            if let geo { reload(geo) }
        }
    }

    /// Stops after `received`: not ready at once but still serving for the drain, so load
    /// balancers take the instance out before a connection is refused (a second SIGTERM/SIGINT
    /// ends the drain early); then closes the listeners, flushes the store and exits 0.
    static func shutdown(_ daemon: Daemon, prefetch: PrefetchScheduler, received: Int32, signals: sigset_t) -> Never {
        let config = daemon.config
        daemon.service.isReady = false
        SystemdNotify.send("STOPPING=1")
        Log.info(
            "received \(received == SIGTERM ? "SIGTERM" : "SIGINT"): /readyz answers 503; still serving for \(config.shutdownDrain) s (shutdownDrain)"
        )
        drain(seconds: config.shutdownDrain, signals: signals)
        Log.info("stopping: no new connections, finishing requests in flight")
        prefetch.stop()
        daemon.activity.stop()
        daemon.certificates?.stopWatching()
        for (_, listener) in daemon.servers { listener.quiesce() }
        daemon.dns?.stop()
        daemon.dot?.stop()
        for (_, listener) in daemon.servers { listener.stop(grace: 10) }
        daemon.store.close()
        daemon.queryLog.close()
        daemon.dnstap?.close()
        daemon.wiring.shutdown()
        daemon.replication?.shutdown()
        daemon.redis?.shutdown()
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
                let outcome = try restoreStoredCache(of: engine, from: store, now: started)
                Log.info(
                    "account \(engine.accountID): loaded \(outcome.loaded) cached answers in \(Int((SystemClock().now() - started) * 1000)) ms"
                )
            } catch {
                Log.error("account \(engine.accountID): could not load the cache: \(error) (starting cold)")
            }
        }
    }

    /// Reads the account's stored cache and puts it back, each batch into the cache on a queue of
    /// its own while the store reads the next: reading and storing a million entries take about
    /// as long as each other, so the two halves of the work run side by side. Returns once every
    /// batch is in. When the load fails or finds the file damaged partway, the cache is emptied
    /// (with what requests cached meanwhile): it starts cold, as it did when nothing was put back
    /// before the whole was read, and the rows of a failed read stay in the file for the next start.
    static func restoreStoredCache(of engine: ResolverEngine, from store: SQLiteStore, now: Timestamp) throws -> WarmLoadOutcome {
        let restoring = DispatchQueue(label: "httpdnsd.warm-load")
        let restored = DispatchGroup()
        let outcome: WarmLoadOutcome
        do {
            outcome = try store.loadCache(
                account: engine.accountID, now: now, discardExpiredOlderThan: engine.config.discardRecordsHasExpiredFor,
                keepExpired: true
            ) { batch in
                let handOver = HandOver(consume batch)
                restoring.async(group: restored) { engine.restore(handOver.take()) }
            }
        } catch {
            restored.wait()
            engine.discardRestored()
            throw error
        }
        restored.wait()
        if outcome.setAside { engine.discardRestored() }
        return outcome
    }

    /// Whether `host` is a loopback address (127.0.0.0/8, ::1).
    static func isLoopback(_ host: String) -> Bool {
        guard let address = IPAddress(host) else { return false }
        return address.family == .a ? address.bytes[0] == 127 : address.bytes == [UInt8](repeating: 0, count: 15) + [1]
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

/// A value handed to a closure that runs once, elsewhere: `take` gives it up, so the receiver
/// holds the only reference (a batch's entries then move into the cache instead of being copied).
private final class HandOver<Value: Sendable>: @unchecked Sendable {
    private var value: Value?

    init(_ value: consuming Value) { self.value = value }

    func take() -> Value { value.take()! }
}
