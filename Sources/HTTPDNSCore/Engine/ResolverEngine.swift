import Synchronization

/// One account's resolver: its configuration, cache, single-flight table, upstream chain,
/// statistics and metrics. Knows nothing of HTTP or SQLite.
///
/// When every upstream and the fallback fail, an expired cached answer is served (marked stale)
/// rather than an error.
///
/// Threads: every method may be called from any thread. A cache hit is answered synchronously
/// (one shard lock, one stats update, no allocation beyond the answer); a miss returns nil and
/// the completion runs later on an upstream thread.
public final class ResolverEngine: Sendable {
    /// The configuration in force and the chain built from it, swapped as a whole on update.
    final class Settings: Sendable {
        let config: AccountConfig
        let chain: UpstreamChain

        init(config: AccountConfig, chain: UpstreamChain) {
            self.config = config
            self.chain = chain
        }
    }

    public typealias ChainFactory = @Sendable (_ accountID: String, _ config: AccountConfig) -> UpstreamChain

    public let accountID: String
    public let stats: StatsRecorder
    public let metrics = EngineMetrics()
    let cache: AnswerCache
    private let settings: Mutex<Settings>
    private let flights = SingleFlight<CacheKey, FamilyOutcome>()
    private let clock: any Clock
    private let persistence: (any CachePersistence)?
    private let makeChain: ChainFactory
    private let failureLog = LogThrottle(interval: 10)

    public init(
        accountID: String, config: AccountConfig, clock: any Clock, persistence: (any CachePersistence)?,
        statsLimit: Int = 100_000, makeChain: @escaping ChainFactory
    ) {
        self.accountID = accountID
        self.clock = clock
        self.persistence = persistence
        self.makeChain = makeChain
        self.stats = StatsRecorder(limit: statsLimit)
        self.cache = AnswerCache(limit: config.cacheCountLimit)
        self.settings = Mutex(Settings(config: config, chain: makeChain(accountID, config)))
    }

    private var current: Settings { settings.withLock { $0 } }

    public var config: AccountConfig { current.config }

    /// Replaces the configuration: rebuilds the upstream chain and applies the new cache limit.
    public func update(config: AccountConfig) {
        let chain = makeChain(accountID, config)
        settings.withLock { $0 = Settings(config: config, chain: chain) }
        for key in cache.resize(limit: config.cacheCountLimit) { persistence?.remove(account: accountID, key: key) }
        if !config.persistentCacheIPEnabled { persistence?.removeAll(account: accountID) }
    }

    // MARK: Resolution

    /// Resolves one (host, family). Returns the outcome at once when the cache answers; otherwise
    /// returns nil and calls `completion` exactly once when the upstream chain has answered.
    public func resolve(
        host: HostName, family: RecordFamily, network: String = "",
        completion: @escaping @Sendable (FamilyOutcome) -> Void
    ) -> FamilyOutcome? {
        metrics.resolveRequests.increment()
        let settings = current
        let key = CacheKey(host: host, family: family, network: network)
        if settings.config.cacheEnable, let entry = cache.get(key) {
            let now = clock.now()
            if !entry.isExpired(at: now) {
                metrics.cacheHits.increment()
                if entry.isNegative { metrics.negativeHits.increment() }
                stats.update(statsKey(key)) { $0.cacheDnsNum += 1 }
                return .success(ResolvedAnswer(entry: entry, at: now, source: .cache))
            }
        }
        metrics.cacheMisses.increment()
        startOrJoin(key, settings: settings, waiter: completion)
        return nil
    }

    /// The cached answer for a key, never asking an upstream. An expired entry is returned only
    /// with `allowExpired` (marked stale), and then refreshed in the background.
    public func cachedAnswer(host: HostName, family: RecordFamily, network: String = "", allowExpired: Bool) -> ResolvedAnswer? {
        let key = CacheKey(host: host, family: family, network: network)
        guard let entry = cache.peek(key) else { return nil }
        let now = clock.now()
        if entry.isExpired(at: now) {
            guard allowExpired else { return nil }
            startOrJoin(key, settings: current, waiter: { _ in })
        }
        return ResolvedAnswer(entry: entry, at: now, source: .cache)
    }

    private func startOrJoin(_ key: CacheKey, settings: Settings, waiter: @escaping @Sendable (FamilyOutcome) -> Void) {
        guard flights.join(key, waiter: waiter) else {
            metrics.singleFlightJoined.increment()
            return
        }
        let config = settings.config
        let statsKey = statsKey(key)
        let query = UpstreamQuery(host: key.host, family: key.family, timeoutMilliseconds: config.timeoutMilliseconds)
        let started = clock.now()
        settings.chain.resolve(query, clock: clock, report: { [self] event in
            record(event, statsKey: statsKey)
        }, completion: { [self] outcome in
            let result: FamilyOutcome
            switch outcome {
            case .answered(let answer, let source):
                let now = clock.now()
                stats.update(statsKey) {
                    $0.successNum += 1
                    $0.recordRTT(seconds: max(0, now - started))
                }
                let entry = Self.entry(for: answer, source: source, config: config, now: now)
                if config.cacheEnable && entry.originTTL > 0 { store(entry, for: key, persist: config.persistentCacheIPEnabled) }
                // Fresh from upstream: never stale, even with a TTL of 0 (an answer not to be cached).
                result = .success(ResolvedAnswer(
                    addresses: entry.addresses, ttl: entry.originTTL, originTTL: entry.originTTL, source: source,
                    nxdomain: entry.nxdomain))
            case .failed(let timedOut, let message):
                metrics.resolveFailures.increment()
                if config.cacheEnable, let expired = cache.peek(key) {
                    // Nothing answered, but an expired answer is cached: it beats an error.
                    metrics.staleServed.increment()
                    result = .success(ResolvedAnswer(entry: expired, at: clock.now(), source: .cache))
                } else {
                    result = .failure(ResolveFailure(timedOut: timedOut, message: message))
                }
            }
            flights.complete(key, with: result)
        })
    }

    private func record(_ event: ChainEvent, statsKey: StatsKey) {
        switch event {
        case .upstream(let name, let result, _):
            metrics.recordUpstream(name: name, result: result)
            stats.update(statsKey) { $0.recordUpstream(result) }
            if case .failure(let error) = result { logFailure(of: name, error, statsKey: statsKey) }
        case .fallback(let result, _):
            if case .success = result { metrics.fallbackSuccess.increment() } else { metrics.fallbackFailure.increment() }
            stats.update(statsKey) {
                $0.gobackLocaldnsNum += 1
                if case .failure = result { $0.localErro += 1 }
            }
            if case .failure(let error) = result { logFailure(of: "local DNS fallback", error, statsKey: statsKey) }
        }
    }

    /// One warning per resolver every 10 s at most, with the count of the ones held back.
    private func logFailure(of resolver: String, _ error: UpstreamError, statsKey: StatsKey) {
        guard let suppressed = failureLog.admit(resolver, now: clock.now()) else { return }
        let family = statsKey.family.typeName
        let more = suppressed > 0 ? " (\(suppressed) more failures since the last report)" : ""
        Log.warning("account \(accountID): \(resolver) failed for \(statsKey.domain) \(family): \(error)\(more)")
    }

    /// The cache entry an upstream answer becomes under the account's caps. Answers without a TTL
    /// (system resolver, JSON `short=1`) get `AccountConfig.answerDefaultTTL`; a negative answer
    /// without an SOA gets `maxNegativeCache`, except a NODATA without TTL information, which is
    /// not negative-cached at all.
    public static func entry(for answer: UpstreamAnswer, source: AnswerSource, config: AccountConfig, now: Timestamp) -> CacheEntry {
        let ttl: UInt32
        if answer.isNegative {
            if answer.negativeTTL == nil && answer.ttl == nil && !answer.nxdomain && source == .upstream {
                ttl = 0
            } else {
                ttl = min(answer.negativeTTL ?? config.maxNegativeCache, config.maxNegativeCache)
            }
        } else if source == .localdns {
            ttl = min(AccountConfig.answerDefaultTTL, config.maxCacheTTL)
        } else {
            ttl = min(answer.ttl ?? AccountConfig.answerDefaultTTL, config.maxCacheTTL)
        }
        return CacheEntry(addresses: answer.addresses, originTTL: ttl, storedAt: now, nxdomain: answer.nxdomain, origin: source)
    }

    private func statsKey(_ key: CacheKey) -> StatsKey {
        StatsKey(domain: key.host.value, family: key.family, network: key.network.isEmpty ? "default" : key.network)
    }

    // MARK: Cache management

    private func store(_ entry: CacheEntry, for key: CacheKey, persist: Bool) {
        let evicted = cache.set(entry, for: key)
        guard persist, let persistence else { return }
        persistence.upsert(account: accountID, key: key, entry: entry)
        for old in evicted { persistence.remove(account: accountID, key: old) }
    }

    /// Puts entries loaded from the store back into the cache (no write-back).
    public func restore(_ entries: [(CacheKey, CacheEntry)]) {
        for (key, entry) in entries { cache.set(entry, for: key) }
    }

    /// Every cached entry, sorted by host, family and network.
    public func cachedEntries() -> [(CacheKey, CacheEntry)] {
        cache.snapshot().sorted { ($0.0.host.value, $0.0.family.rawValue, $0.0.network) < ($1.0.host.value, $1.0.family.rawValue, $1.0.network) }
    }

    /// Evicts every entry of `host`; returns how many.
    public func evict(host: HostName) -> Int {
        let removed = cache.remove(host: host)
        for key in removed { persistence?.remove(account: accountID, key: key) }
        return removed.count
    }

    /// Empties the cache; returns how many entries it held.
    public func evictAll() -> Int {
        persistence?.removeAll(account: accountID)
        return cache.removeAll()
    }

    public var cacheCount: Int { cache.count }

    public var now: Timestamp { clock.now() }

    /// Calls `completion` once every cache change made so far is durable (at once without a store).
    public func persisted(completion: @escaping @Sendable () -> Void) {
        if let persistence { persistence.flush(completion: completion) } else { completion() }
    }
}
