import Synchronization

/// How one preloaded host ended: an answer (or failure) per family asked.
public struct PreloadOutcome: Sendable {
    public var host: HostName
    public var results: [(RecordFamily, FamilyOutcome)]

    /// True when every family got an answer (negative answers included).
    public var ok: Bool {
        results.allSatisfy { if case .success = $0.1 { true } else { false } }
    }
}

/// Resolves a list of hosts through an engine with at most `concurrency` resolutions in flight,
/// then reports each host's outcome in the order given.
public final class Preloader: Sendable {
    private struct State: Sendable {
        var next = 0
        var inFlight = 0
        var pumping = false
        var pumpAgain = false
    }

    private let engine: ResolverEngine
    private let items: [(host: Int, family: RecordFamily)]
    private let hosts: [HostName]
    private let families: [RecordFamily]
    private let concurrency: Int
    private let network: String
    private let state = Mutex(State())
    private let gather: OutcomeGather<FamilyOutcome>

    /// Starts at once; `completion` runs on whichever thread finishes the last resolution.
    /// `network` is the client network the answers are for (used by accounts with `ispEnable`).
    @discardableResult
    public static func start(
        engine: ResolverEngine, hosts: [HostName], families: [RecordFamily], concurrency: Int, network: String = "",
        completion: @escaping @Sendable ([PreloadOutcome]) -> Void
    ) -> Preloader {
        let preloader = Preloader(
            engine: engine, hosts: hosts, families: families, concurrency: concurrency, network: network, completion: completion)
        preloader.pump()
        return preloader
    }

    private init(
        engine: ResolverEngine, hosts: [HostName], families: [RecordFamily], concurrency: Int, network: String,
        completion: @escaping @Sendable ([PreloadOutcome]) -> Void
    ) {
        self.engine = engine
        self.network = network
        self.hosts = hosts
        self.families = families
        self.concurrency = max(1, concurrency)
        self.items = hosts.indices.flatMap { host in families.map { (host: host, family: $0) } }
        self.gather = OutcomeGather(count: items.count) { outcomes in
            let perHost = families.count
            completion(hosts.indices.map { host in
                PreloadOutcome(host: hosts[host], results: families.indices.map { (families[$0], outcomes[host * perHost + $0]) })
            })
        }
    }

    /// Starts resolutions until the window is full. Re-entrant calls (a completion arriving while
    /// pumping) only ask the running pump to look again, so deep recursion cannot build up.
    private func pump() {
        let shouldRun = state.withLock { state -> Bool in
            if state.pumping {
                state.pumpAgain = true
                return false
            }
            state.pumping = true
            return true
        }
        guard shouldRun else { return }
        while true {
            let index: Int? = state.withLock { state in
                guard state.next < items.count, state.inFlight < concurrency else {
                    if state.pumpAgain {
                        state.pumpAgain = false
                        return -1
                    }
                    state.pumping = false
                    return nil
                }
                state.inFlight += 1
                state.next += 1
                return state.next - 1
            }
            guard let index else { return }
            if index < 0 { continue }
            let item = items[index]
            let sync = engine.resolve(host: hosts[item.host], family: item.family, network: network) { [self] outcome in
                finish(index, outcome)
                pump()
            }
            if let sync { finish(index, sync) }
        }
    }

    private func finish(_ index: Int, _ outcome: FamilyOutcome) {
        state.withLock { $0.inFlight -= 1 }
        gather.fill(index, with: outcome)
    }
}
