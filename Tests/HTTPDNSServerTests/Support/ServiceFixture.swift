import Foundation
import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSTestSupport
import Synchronization

/// The server module's response type (the test-support target has an `HTTPResponse` of its own).
typealias ServerResponse = HTTPDNSServer.HTTPResponse

/// An `HTTPDNSService` over a registry whose engines share one manual clock and a chain of
/// in-memory upstreams (and, while `localDNSFallback` is on, an in-memory "system" fallback).
/// Account "default" exists from the start.
struct ServiceFixture {
    let clock: ManualClock
    let upstreams: [InMemoryUpstream]
    let fallback: InMemoryUpstream
    let registry: AccountRegistry
    let service: HTTPDNSService
    let accountStore: RecordingAccountPersistence

    /// The first upstream.
    var upstream: InMemoryUpstream { upstreams[0] }

    init(
        config: AccountConfig = .test(), upstreamCount: Int = 1, persistence: (any CachePersistence)? = nil,
        adminToken: String? = nil, limits: HTTPDNSService.Limits = HTTPDNSService.Limits(),
        accountStore: RecordingAccountPersistence = RecordingAccountPersistence()
    ) {
        let clock = ManualClock()
        let upstreams = (0..<upstreamCount).map { InMemoryUpstream(name: "memory-\($0)", clock: clock) }
        let fallback = InMemoryUpstream(name: "system", clock: clock)
        let registry = AccountRegistry { id, config in
            ResolverEngine(accountID: id, config: config, clock: clock, persistence: persistence) { _, config in
                UpstreamChain(upstreams: upstreams, fallback: config.localDNSFallback ? fallback : nil)
            }
        }
        registry.upsert("default", config: config)
        self.clock = clock
        self.upstreams = upstreams
        self.fallback = fallback
        self.registry = registry
        self.accountStore = accountStore
        accountStore.registry = registry
        service = HTTPDNSService(registry: registry, accountStore: accountStore, adminToken: adminToken, limits: limits, clock: clock)
    }

    var engine: ResolverEngine { registry.engine("default")! }

    /// Routes `request` and returns the handler's result untouched.
    func handle(_ request: HTTPRequest) -> HandlerResult {
        service.handle(request)
    }

    /// Routes a request and returns its response: at once for `.response`, else after starting
    /// the deferred work and releasing every held upstream reply. `deferred` tells which it was.
    func send(
        _ method: String, _ path: String, query: [String: String] = [:], authorization: String? = nil,
        body: [UInt8] = [], peer: String? = nil, forwardedFor: String? = nil, listener: Listener = .main, contentType: String? = nil
    ) -> Exchange {
        var request = HTTPRequest(
            method: method, path: path, query: query, authorization: authorization, body: body, peer: peer, forwardedFor: forwardedFor)
        request.listener = listener
        request.contentType = contentType
        return Exchange(service.handle(request), releasing: upstreams + [fallback])
    }

    func get(
        _ path: String, _ query: [String: String] = [:], authorization: String? = nil, peer: String? = nil,
        forwardedFor: String? = nil, listener: Listener = .main
    ) -> Exchange {
        send("GET", path, query: query, authorization: authorization, peer: peer, forwardedFor: forwardedFor, listener: listener)
    }

    /// Puts answers straight into the cache of `account` (no upstream involved).
    func seed(_ entries: [(String, RecordFamily, CacheEntry)], account: String = "default") {
        registry.engine(account)!.restore(entries.map { (CacheKey(host: HostName($0.0)!, family: $0.1), $0.2) })
    }

    /// An entry stored now with `ttl` seconds to live (a negative one may keep its zone's SOA).
    func entry(_ addresses: [String], ttl: UInt32 = 300, nxdomain: Bool = false, soa: NegativeAnswerSOA? = nil) -> CacheEntry {
        CacheEntry(addresses: addresses, originTTL: ttl, storedAt: clock.now(), nxdomain: nxdomain, soa: soa)
    }

    /// The SOA of `example.test.` (MINIMUM 45), as a negative answer from it keeps it.
    static let zoneSOA = NegativeAnswerSOA(
        zone: "example.test.", primary: "ns.example.test.", mailbox: "hostmaster.example.test.", serial: 2026120301, refresh: 3600,
        retry: 900, expire: 604_800, minimum: 45)!
}

/// One request's outcome as seen by a client of the service.
struct Exchange {
    /// True when the handler deferred (the connection would have been suspended).
    let deferred: Bool
    /// The response, nil when a deferred handler has not answered yet.
    let response: ServerResponse?
    /// Every response the responder received (to catch double answers).
    let box: ResponseBox?

    init(_ result: HandlerResult, releasing upstreams: [InMemoryUpstream] = []) {
        switch result {
        case .response(let response):
            deferred = false
            self.response = response
            box = nil
        case .deferred(let start):
            let box = ResponseBox()
            start { box.append($0) }
            for upstream in upstreams { upstream.releaseAll() }
            deferred = true
            response = box.first
            self.box = box
        }
    }

    private init(deferred: Bool, response: ServerResponse?, box: ResponseBox?) {
        self.deferred = deferred
        self.response = response
        self.box = box
    }

    /// The exchange once a deferred response has come (answered from another thread), after
    /// `seconds` at most.
    func awaited(seconds: Double = 10) -> Exchange {
        guard response == nil, let box else { return self }
        let deadline = Date().addingTimeInterval(seconds)
        while box.first == nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        return Exchange(deferred: deferred, response: box.first, box: box)
    }

    var status: Int { response?.status ?? -1 }

    /// The body parsed as JSON (any top-level value).
    var json: Any? {
        guard let response else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(response.body), options: [.fragmentsAllowed])
    }

    var object: [String: Any] { json as? [String: Any] ?? [:] }

    /// `error.code` of an error body.
    var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }

    /// `error.message` of an error body.
    var errorMessage: String? { (object["error"] as? [String: Any])?["message"] as? String }

    func header(_ name: String) -> String? {
        response?.headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { response?.bodyText ?? "" }
}

/// Responses handed to a responder on any thread.
final class ResponseBox: Sendable {
    private let responses = Mutex<[ServerResponse]>([])

    func append(_ response: ServerResponse) { responses.withLock { $0.append(response) } }

    var all: [ServerResponse] { responses.withLock { $0 } }
    var first: ServerResponse? { all.first }
    var count: Int { all.count }
}

extension AccountConfig {
    /// A config that can only reach the in-memory doubles: loopback upstream names, no fallback.
    static func test(_ change: (inout AccountConfig) -> Void = { _ in }) -> AccountConfig {
        var config = AccountConfig()
        config.upstreams = [UpstreamSpec(kind: .doh, url: "http://127.0.0.1:9/dns-query")]
        config.localDNSFallback = false
        config.localDNSServers = ["127.0.0.1:9"]
        change(&config)
        return config
    }
}

/// Reads a JSON number (JSONSerialization gives `NSNumber` or a Swift integer).
func number(_ value: Any?) -> Double? {
    if value is String { return nil }
    if let value = value as? NSNumber { return value.doubleValue }
    if let value = value as? Int { return Double(value) }
    if let value = value as? Double { return value }
    return nil
}

func strings(_ value: Any?) -> [String]? { value as? [String] }
