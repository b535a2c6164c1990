import CAres
import HTTPDNSCore
import HTTPDNSLoop
import HTTPDNSTestSupport
import Synchronization
import Testing

@testable import HTTPDNSUpstream

/// The c-ares fallback against unbound on loopback.
struct SystemResolverLiveTests {
    private func resolve(_ resolver: SystemResolver, _ host: String, _ family: RecordFamily, timeout: Int = 30_000) async
        -> Result<UpstreamAnswer, UpstreamError>
    {
        let query = UpstreamQuery(host: HostName(host)!, family: family, timeoutMilliseconds: timeout)
        return await awaitResult { resolver.resolve(query, completion: $0) }
    }

    /// Resolves, with the seconds from the call to the moment the resolver thread called the
    /// completion: what the resolver did, without the time the awaiting task then waits for a
    /// thread of the cooperative pool (on two cores, tests that block it delayed that by 30 s).
    private func resolveTimed(_ resolver: SystemResolver, _ host: String, timeout: Int) async
        -> (Result<UpstreamAnswer, UpstreamError>, Double)
    {
        let query = UpstreamQuery(host: HostName(host)!, family: .a, timeoutMilliseconds: timeout)
        let started = MonotonicTime.now()
        return await withCheckedContinuation { continuation in
            resolver.resolve(query) { continuation.resume(returning: ($0, MonotonicTime.now() - started)) }
        }
    }

    @Test func resolvesTheZoneThroughGivenServer() async throws {
        try await LoopbackDNSServers.with { servers in
            let resolver = SystemResolver(servers: ["127.0.0.1:\(servers.unboundPort)"])
            defer { resolver.shutdown() }
            #expect(resolver.name == "localdns")

            let a = try await resolve(resolver, "www.example.test", .a).get()
            #expect(Set(a.addresses) == ["127.0.0.11", "127.0.0.12"])
            #expect(a.ttl == nil)

            let aaaa = try await resolve(resolver, "www.example.test", .aaaa).get()
            #expect(aaaa.addresses == ["::1"])

            let cname = try await resolve(resolver, "api.example.test", .a).get()
            #expect(Set(cname.addresses) == ["127.0.0.11", "127.0.0.12"])

            let nx = try await resolve(resolver, "nope.example.test", .a).get()
            #expect(nx.nxdomain)
            #expect(nx.addresses.isEmpty)

            let nodata = try await resolve(resolver, "v4only.example.test", .aaaa).get()
            #expect(nodata.addresses.isEmpty)
            #expect(!nodata.nxdomain)
        }
    }

    @Test func deadPortIsRefusedWithTransportLongBeforeAnyTimeout() async throws {
        // Every timeout in play is 60 s: a failure that waited for one would be `.timeout` and take
        // a minute. The refusal (ICMP port unreachable) must end the lookup as `.transport` at once.
        let port = try LoopbackDNSServers.freePort()
        let resolver = SystemResolver(servers: ["127.0.0.1:\(port)"], attemptTimeoutMilliseconds: 60_000)
        defer { resolver.shutdown() }
        let (result, elapsed) = await resolveTimed(resolver, "www.example.test", timeout: 60_000)
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code == .transport, "\(error)")
        #expect(elapsed < 30, "the refusal took \(elapsed) s: it waited for a timeout")
    }

    @Test func queryDeadlineIsEnforcedAgainstSilentServer() async throws {
        // A UDP socket that never answers, and a c-ares attempt timeout of 60 s: only the query's
        // own 300 ms deadline can end the lookup before a minute has passed. The bounds separate
        // "has a deadline" from "has none" by a margin no load closes (never early; far below 60 s).
        let silent = try SilentUDPSocket()
        let resolver = SystemResolver(servers: ["127.0.0.1:\(silent.port)"], attemptTimeoutMilliseconds: 60_000)
        defer { resolver.shutdown() }
        let (result, elapsed) = await resolveTimed(resolver, "www.example.test", timeout: 300)
        guard case .failure(let error) = result else {
            Issue.record("expected a timeout, got \(result)")
            return
        }
        #expect(error.code == .timeout)
        #expect(elapsed >= 0.25 && elapsed < 20, "the lookup ended after \(elapsed) s, not at its 300 ms deadline")
    }

    @Test func shutdownFailsPendingLookupsAndLaterOnes() async throws {
        let silent = try SilentUDPSocket()
        // Timeouts no stall of this task can reach: the lookup must still be pending at the
        // shutdown, which comes once its query has reached the silent server.
        let resolver = SystemResolver(servers: ["127.0.0.1:\(silent.port)"], attemptTimeoutMilliseconds: 1_800_000)
        let query = UpstreamQuery(host: HostName("www.example.test")!, family: .a, timeoutMilliseconds: 1_800_000)
        let outcome = Mutex<Result<UpstreamAnswer, UpstreamError>?>(nil)
        resolver.resolve(query) { result in outcome.withLock { $0 = result } }
        let reached = await Poll.until(limit: 30, every: .milliseconds(10)) { silent.hasReceived }
        try #require(reached, "the query never reached the silent server")
        #expect(outcome.withLock { $0 } == nil, "the lookup ended before the shutdown")
        resolver.shutdown()
        // `shutdown` returns once the thread has failed what was pending.
        let result = try #require(outcome.withLock { $0 }, "shutdown returned with the lookup still pending")
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code == .transport)
        let after = await awaitResult { resolver.resolve(query, completion: $0) }
        #expect((try? after.get()) == nil)
    }

    @Test func unusableServerListFailsEveryLookupWithTransport() async {
        let resolver = SystemResolver(servers: ["not a server!!"])
        defer { resolver.shutdown() }
        let result = await resolve(resolver, "www.example.test", .a)
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code == .transport)
        #expect(error.message.contains("localDNSServers"))
    }

    /// A failed `ares_library_init` is reported, with its c-ares status, by every lookup; the
    /// resolver never goes on to set up a channel as if c-ares were ready.
    @Test func failedLibraryInitialisationFailsEveryLookupWithTransport() async {
        let shared = AresLoopShared(services: .service)
        // A closed loopback port: a lookup that got past set-up would be refused, not sent afar.
        let configuration = AresLoopWorker.Configuration(servers: ["127.0.0.1:9"], attemptTimeoutMilliseconds: 1000, tries: 1)
        shared.startThread(named: "httpdnsd-ares-test") {
            AresLoopWorker(shared: shared, configuration: configuration, libraryStatus: ARES_ENOMEM).run()
        }
        defer { shared.stopAndWait() }
        let query = UpstreamQuery(host: HostName("www.example.test")!, family: .a, timeoutMilliseconds: 30_000)
        let result = await awaitResult { completion in
            _ = shared.enqueue(PendingLookup(.address(query, completion), timeoutMilliseconds: query.timeoutMilliseconds))
        }
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code == .transport)
        #expect(error.message.hasPrefix("ares_library_init: "))
        #expect(error.underlying == Int(ARES_ENOMEM))
    }
}
