import Foundation
import HTTPDNSTestSupport
import HTTPDNSWire
import Testing

/// Heap allocations of a cache hit in every format, counted in the real binary: httpdnsd runs
/// with `scripts/test/alloc_counter.c` preloaded (`AllocationCounter`), and each kind of hit is
/// asked `hits` times on one keep-alive connection while the library counts (and records the
/// call stack of) every allocation. A hit may allocate only what libmicrohttpd's response API
/// takes: the body (`FastResponse`'s buffer, which libmicrohttpd frees once sent), the response
/// (`MHD_create_response_from_buffer`) and three per header (`MHD_add_response_header`: the
/// entry and copies of name and value). Everything else the serving thread allocates per hit is
/// "ours" and must be none; another thread must not allocate in step with the hits.
///
/// Only an optimised build keeps the fast path's closures and temporaries off the heap: against
/// a debug binary (what `make test` builds) the check of our allocations is a known issue, and
/// `make test-allocations` runs this suite against a release binary.
@Suite("Allocations of a cache hit")
struct FastPathAllocationTests {
    static let hits = 2000
    /// Requests before the counted ones: the first may miss; the rest let everything made lazily
    /// (the connection's memory, the cache entry's, the thread's) be made before counting.
    static let warmup = 200
    /// Allocations per window beyond the expected ones that are still no allocation per hit.
    static let slack = hits / 20

    /// One kind of hit: what is asked, and how many headers its answer adds (`Content-Type`, and
    /// `Cache-Control` for RFC 8484).
    struct Hit: CustomStringConvertible, Sendable {
        var format: String
        var account: String
        var target: String
        var headers: Int
        var description: String { "\(format) of account \(account)" }
    }

    /// What one window of `hits` requests cost.
    struct Window {
        var fastAnswers: Double
        /// Allocations of the thread that served the connection, and of libmicrohttpd among them.
        var serving: UInt64, libmicrohttpd: UInt64
        /// Call stacks off the serving thread that allocated at least once every second hit.
        var inStepElsewhere: [AllocationCounter.Site]
        var elsewhere: UInt64
        /// Allocations whose call stack was not recorded (the site table full).
        var lost: UInt32
        /// The recorded call stacks as text (`AllocationSites.describe`), made when a check fails.
        var sites: () -> String
    }

    static func dnsArgument(_ name: String, subnet: DNSQueryMessage.ClientSubnet? = nil) throws -> String {
        RFC8484Tests.base64URL(try DNSQueryWriter.query(name: name, type: 1, id: 0x5151, clientSubnet: subnet))
    }

    /// The hits of the four formats on `account` (`default`: the paths that name no account),
    /// naming the client's address in each format's own way when `clientIP` is given.
    static func hits(account: String, clientIP: String? = nil) throws -> [Hit] {
        let www = TestZone.www
        let v1 = "/v1/\(account)/resolve?host=\(www)" + (clientIP.map { "&client_ip=\($0)" } ?? "")
        let emas = "/\(account)/d?host=\(www)" + (clientIP.map { "&ip=\($0)" } ?? "")
        let json =
            "/resolve?name=\(www)" + (account == "default" ? "" : "&uid=\(account)") + (clientIP.map { "&edns_client_subnet=\($0)" } ?? "")
        let subnet = clientIP.map { _ in
            DNSQueryMessage.ClientSubnet(family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, address: [198, 51, 100, 0])
        }
        let message = (account == "default" ? "/dns-query" : "/v1/\(account)/dns-query") + "?dns=\(try dnsArgument(www, subnet: subnet))"
        return [
            Hit(format: "v1", account: account, target: v1, headers: 1),
            Hit(format: "EMAS", account: account, target: emas, headers: 1),
            Hit(format: "DoH JSON", account: account, target: json, headers: 1),
            Hit(format: "RFC 8484", account: account, target: message, headers: 2),
        ]
    }

    /// Why every hit of a debug build allocates (our part is a known issue there).
    static let debugBuildIssue = Comment(
        rawValue: "unoptimised code allocates closure contexts and copies on every hit (FastRoutes.match, "
            + "AccountRegistry.withEngine, AnswerCache.hit, HTTPRequest.header, ...): only a release build is checked")

    /// Not under `make sanitize`: AddressSanitizer replaces malloc itself and refuses to start
    /// after a preloaded library.
    @Test(.disabled(if: ProcessInfo.processInfo.environment["ASAN_OPTIONS"] != nil, "AddressSanitizer owns malloc"))
    func aCacheHitOfEveryFormatAllocatesOnlyLibmicrohttpdsResponse() async throws {
        let counter = try AllocationCounter.build()
        try await withService(configure: { servers, options in
            options.environment.merge(counter.environment) { _, new in new }
            options.config = [
                "accounts": [
                    "default": loopbackAccount(servers),
                    "isp": loopbackAccount(servers, ["ispEnable": true]),
                    "limited": loopbackAccount(servers, ["rateLimit": 100_000, "rateBurst": 100_000]),
                    // A domain list is checked on every hit, by hashing the request's bytes in place.
                    "listed": loopbackAccount(
                        servers,
                        ["domains": ["mode": "listed", "allow": [.string(TestZone.www), "*.shop.test"], "deny": ["ads.shop.test"]]]),
                ]
            ]
        }) { _, service in
            let debugBuild = try AllocationSites(pid: service.pid).isDebugBuild
            let hits =
                try Self.hits(account: "default") + Self.hits(account: "isp", clientIP: "198.51.100.7") + Self.hits(account: "limited")
                + Self.hits(account: "listed")
            for (index, hit) in hits.enumerated() {
                let window = try await measure(hit, window: UInt32(index + 1), counter: counter, service: service)
                check(window, of: hit, knownIssue: debugBuild ? Self.debugBuildIssue : nil)
            }
        }
    }

    private func check(_ window: Window, of hit: Hit, knownIssue: Comment?) {
        let hits = Self.hits
        let report = {
            "\(hit), \(hits) hits: \(window.serving) allocations on the serving thread, \(window.libmicrohttpd) in libmicrohttpd, "
                + "\(window.elsewhere) on other threads, \(window.lost) stacks not recorded\n\(window.sites())"
        }
        #expect(window.fastAnswers == Double(hits), "\(hit): \(window.fastAnswers) of \(hits) hits answered on the fast path")
        // libmicrohttpd: the response and three per header.
        let expected = hits * (1 + 3 * hit.headers)
        #expect(abs(Int(window.libmicrohttpd) - expected) < Self.slack, "libmicrohttpd: \(report())")
        #expect(window.inStepElsewhere.isEmpty, "allocations on another thread in step with the hits: \(report())")
        // Ours: the body only.
        let ours = Int(window.serving) - Int(window.libmicrohttpd)
        let onlyTheBody = { #expect(ours - hits < Self.slack, "\(ours - hits) allocations beside the body: \(report())") }
        if let knownIssue {
            withKnownIssue(knownIssue, onlyTheBody)
        } else {
            onlyTheBody()
        }
    }

    /// Asks `hit` `warmup` times, then `hits` times with the counter recording under `window`.
    private func measure(_ hit: Hit, window: UInt32, counter: AllocationCounter, service: HTTPDNSDProcess) async throws -> Window {
        let pid = service.pid
        let (before, after, fast) = try await Self.onThread {
            let connection = try KeepAliveConnection(port: service.port)
            for _ in 0..<Self.warmup { try Self.expectOK(connection.get(hit.target), hit) }
            let fastBefore = try Self.fastAnswers(service)
            try counter.record(window: window)
            let before = try counter.counts(of: pid)
            for _ in 0..<Self.hits { try Self.expectOK(connection.get(hit.target), hit) }
            let after = try counter.counts(of: pid)
            try counter.record(window: 0)
            return (before, after, try Self.fastAnswers(service) - fastBefore)
        }
        let sites = try counter.sites(window: window)
        let names = try AllocationSites(pid: pid)
        let threads = after.threads(since: before)
        let serving = threads.max { $0.value < $1.value }?.key ?? 0
        let mhd = sites.filter { $0.thread == serving && names.owner($0).hasPrefix("libmicrohttpd") }.reduce(0) { $0 + $1.count }
        let total = after.allocations - before.allocations
        return Window(
            fastAnswers: fast, serving: threads[serving] ?? 0, libmicrohttpd: mhd,
            inStepElsewhere: sites.filter { $0.thread != serving && $0.count >= UInt64(Self.hits / 2) },
            elsewhere: total - (threads[serving] ?? 0), lost: after.lost - before.lost,
            sites: {
                names.describe(
                    sites.filter { !names.owner($0).hasPrefix("libmicrohttpd") }
                        + sites.filter { names.owner($0).hasPrefix("libmicrohttpd") })
            })
    }

    /// `httpdns_http_fast_path_total` of the main listener (a blocking request of its own).
    private static func fastAnswers(_ service: HTTPDNSDProcess) throws -> Double {
        let response = try service.client.requestBlocking("GET", "/metrics")
        return PrometheusText(response.text).sum("httpdns_http_fast_path_total", ["listener": "main"])
    }

    private static func expectOK(_ response: (status: Int, body: [UInt8]), _ hit: Hit) throws {
        guard response.status == 200 else {
            throw HarnessError("\(hit): \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
    }

    /// Runs blocking `work` on a thread of its own, off the cooperative pool.
    private static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }
}
