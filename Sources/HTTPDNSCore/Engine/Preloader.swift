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
public enum Preloader {
    /// Starts at once; `completion` runs on whichever thread finishes the last resolution.
    /// `network` is the client network the answers are for (used by accounts with `ispEnable`).
    /// `hosts` must not repeat a name (the handler removes duplicates).
    public static func start(
        engine: ResolverEngine, hosts: [HostName], families: [RecordFamily], concurrency: Int, network: String = "",
        completion: @escaping @Sendable ([PreloadOutcome]) -> Void
    ) {
        let items = hosts.flatMap { host in families.map { CacheKey(host: host, family: $0, network: network) } }
        let slots = Dictionary(items.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { first, _ in first })
        let gather = OutcomeGather<FamilyOutcome>(count: items.count) { outcomes in
            let perHost = families.count
            completion(
                hosts.indices.map { host in
                    PreloadOutcome(host: hosts[host], results: families.indices.map { (families[$0], outcomes[host * perHost + $0]) })
                })
        }
        let queue = KeyQueue(concurrency: concurrency) { key, done in
            guard let index = slots[key] else { return done() }
            let sync = engine.resolve(host: key.host, family: key.family, network: key.network) { outcome in
                gather.fill(index, with: outcome)
                done()
            }
            if let sync {
                gather.fill(index, with: sync)
                done()
            }
        }
        queue.enqueue(items)
    }
}
