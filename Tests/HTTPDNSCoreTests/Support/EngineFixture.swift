import HTTPDNSTestSupport
import Synchronization

@testable import HTTPDNSCore

/// An engine for account "test" wired to in-memory upstreams, a manual clock and (optionally) a
/// recording persistence. The chain follows the config the way the service's factory does:
/// the upstreams in order, and the fallback only while `localDNSFallback` is on.
struct EngineFixture {
    let clock: ManualClock
    let upstreams: [InMemoryUpstream]
    let fallback: InMemoryUpstream
    let persistence: RecordingCachePersistence?
    let engine: ResolverEngine

    /// The first upstream.
    var upstream: InMemoryUpstream { upstreams[0] }

    init(
        config: AccountConfig = .test(), upstreamCount: Int = 1, persistence: RecordingCachePersistence? = nil,
        speedTester: (any SpeedTester)? = nil
    ) {
        let clock = ManualClock()
        let upstreams = (0..<upstreamCount).map { InMemoryUpstream(name: "memory-\($0)", clock: clock) }
        let fallback = InMemoryUpstream(name: "system", clock: clock)
        self.clock = clock
        self.upstreams = upstreams
        self.fallback = fallback
        self.persistence = persistence
        engine = ResolverEngine(
            accountID: "test", config: config, clock: clock, persistence: persistence, speedTester: speedTester
        ) { _, config in
            UpstreamChain(upstreams: upstreams, fallback: config.localDNSFallback ? fallback : nil)
        }
    }

    /// Resolves (for `client`, whose share of the upstream budget a miss takes) and reports what
    /// arrived by the time `resolve` returned.
    func resolve(_ host: String, _ family: RecordFamily = .a, network: String = "", client: ClientID? = nil) -> Resolution {
        let box = OutcomeBox()
        let sync = engine.resolve(host: HostName(host)!, family: family, network: network, client: client) { box.append($0) }
        return Resolution(synchronous: sync, box: box)
    }
}

/// What one `resolve` call gave: a synchronous (cache) outcome, or the completion's.
struct Resolution: Sendable {
    let synchronous: FamilyOutcome?
    let box: OutcomeBox

    /// True when the cache answered inside `resolve`.
    var fromCache: Bool { synchronous != nil }

    /// The outcome, synchronous or delivered by the completion so far (nil while held).
    var outcome: FamilyOutcome? { synchronous ?? box.values.first }

    var answer: ResolvedAnswer? {
        guard case .success(let answer) = outcome else { return nil }
        return answer
    }

    var failure: ResolveFailure? {
        guard case .failure(let failure) = outcome else { return nil }
        return failure
    }
}

/// Collects values delivered on any thread.
final class OutcomeBox: Sendable {
    private let storage = Mutex<[FamilyOutcome]>([])

    func append(_ value: FamilyOutcome) { storage.withLock { $0.append(value) } }

    var values: [FamilyOutcome] { storage.withLock { $0 } }
}

extension AccountConfig {
    /// A config that never points anywhere real: a loopback upstream spec (the fixture's chain
    /// ignores it), no persistence unless asked, and no refresh-ahead (tests of the background
    /// refresh rules turn it on), so that TTL rules can be tested on their own.
    static func test(_ change: (inout AccountConfig) -> Void = { _ in }) -> AccountConfig {
        var config = AccountConfig()
        config.upstreams = [UpstreamSpec(kind: .json, url: "http://127.0.0.1:9/resolve")]
        config.localDNSServers = ["127.0.0.1:9"]
        config.persistentCacheIPEnabled = false
        config.schedulePrefetchEnable = false
        change(&config)
        return config
    }
}

extension HostName {
    /// A host name the test knows to be valid.
    static func valid(_ text: String) -> HostName {
        guard let name = HostName(text) else { fatalError("test host name '\(text)' is invalid") }
        return name
    }
}
