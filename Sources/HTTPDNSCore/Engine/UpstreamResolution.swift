/// One key asked of an account's upstream chain, from launch to the flight's completion: the
/// chain's resolution, holding what the completion needs. One object a miss rather than a
/// closure for each callback, each capturing its own copies.
///
/// It holds `settings`, the account's one shared copy, and reads the configuration through
/// it: a copy of `AccountConfig` would retain and release all its strings and arrays on every
/// miss.
final class UpstreamResolution: ChainResolution, @unchecked Sendable {
    let engine: ResolverEngine
    let key: CacheKey
    let settings: ResolverEngine.Settings
    let statsKey: StatsKey
    /// When the chain was asked: the statistics record's RTT and the debug line's duration.
    let started: Timestamp
    /// Whether the shared tier gave this instance the fleet's lock on the key (`SharedAnswerTier`).
    let holdsSharedLock: Bool

    init(engine: ResolverEngine, key: CacheKey, settings: ResolverEngine.Settings, holdsSharedLock: Bool) {
        self.engine = engine
        self.key = key
        self.settings = settings
        self.holdsSharedLock = holdsSharedLock
        statsKey = engine.statsKey(key)
        started = engine.clock.now()
        super.init(
            chain: settings.chain,
            query: UpstreamQuery(
                host: key.host, family: key.family, timeoutMilliseconds: settings.config.timeoutMilliseconds,
                clientSubnet: key.network.isEmpty ? nil : key.network),
            clock: engine.clock)
    }

    override func report(_ event: ChainEvent) { engine.record(event, statsKey: statsKey) }

    /// A reply that ends in a CNAME without addresses is followed to where it points first.
    override func finish(_ outcome: ChainOutcome) {
        guard case .answered(let answer, let source) = outcome, CNAMEFollower.isDangling(answer) else {
            engine.complete(self, outcome)
            return
        }
        CNAMEFollower.follow(
            answer, source: source, query: query, chain: settings.chain, clock: clock, report: { [self] in report($0) }
        ) { [self] followed, stop in
            if let stop { engine.logCut(stop, of: key) }
            engine.complete(self, followed)
        }
    }
}
