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
        /// The options every lookup reads, as plain values: copying them retains nothing.
        let lookup: LookupOptions

        init(config: AccountConfig, chain: UpstreamChain) {
            self.config = config
            self.chain = chain
            self.lookup = LookupOptions(config)
        }
    }

    /// The options a request and a cache lookup need, without the account's arrays and strings.
    public struct LookupOptions: Sendable {
        public let cacheEnable: Bool
        public let ispEnable: Bool
        public let ipv6Enable: Bool
        public let shortEnable: Bool
        public let schedulePrefetchEnable: Bool
        public let reuseExpiredIPEnabled: Bool
        /// The account has `clientKeys`: requests may need a signature check.
        public let hasClientKeys: Bool
        /// The account has an `aesSecretKey`: its requests may be encrypted.
        public let hasAESKey: Bool
        /// The account's `rateLimit` and `rateBurst` (nil: the service's defaults).
        public let rateLimit: Double?
        public let rateBurst: Int?

        init(_ config: AccountConfig) {
            cacheEnable = config.cacheEnable
            ispEnable = config.ispEnable
            ipv6Enable = config.ipv6Enable
            shortEnable = config.shortEnable
            schedulePrefetchEnable = config.schedulePrefetchEnable
            reuseExpiredIPEnabled = config.reuseExpiredIPEnabled
            hasClientKeys = !config.clientKeys.isEmpty
            hasAESKey = config.aesSecretKey != nil
            rateLimit = config.rateLimit
            rateBurst = config.rateBurst
        }
    }

    public typealias ChainFactory = @Sendable (_ accountID: String, _ config: AccountConfig) -> UpstreamChain

    public let accountID: String
    public let stats: EngineStats
    public let metrics = EngineMetrics()
    let cache: AnswerCache
    private let settings: ReadMostly<Settings>
    private let flights = SingleFlight<CacheKey, FamilyOutcome>()
    let clock: any Clock
    private let persistence: (any CachePersistence)?
    private let makeChain: ChainFactory
    private let failureLog = LogThrottle(interval: 10)
    let backoff = RefreshBackoff()
    /// Probes the addresses of answers when the account has `speedTestEnable` (nil: never).
    let speedTester: (any SpeedTester)?
    /// Measured connection times per address, shared by every answer of the account.
    public let rtt = RTTTable()
    /// Keys whose addresses are being probed right now (one probe run per key at a time).
    let probing = Mutex<Set<CacheKey>>([])
    /// Concurrency of scheduled and on-demand refreshes per account.
    public static let refreshConcurrency = 8
    private let refreshQueueBox = Mutex<KeyQueue?>(nil)
    /// The account's `upstreamQPS` budget, taken once per upstream query started.
    let upstreamBudget = UpstreamBudget()
    /// The tier the fleet's replicas share (Redis), asked on a client's miss before the
    /// upstreams and given what they answer; nil without one.
    let sharedTier: (any SharedAnswerTier)?
    private var refreshQueue: KeyQueue { refreshQueueBox.withLock { $0! } }

    public init(
        accountID: String, config: AccountConfig, clock: any Clock, persistence: (any CachePersistence)?,
        statsLimit: Int = 100_000, speedTester: (any SpeedTester)? = nil, sharedTier: (any SharedAnswerTier)? = nil,
        makeChain: @escaping ChainFactory
    ) {
        self.accountID = accountID
        self.sharedTier = sharedTier
        self.speedTester = speedTester
        self.clock = clock
        self.persistence = persistence
        self.makeChain = makeChain
        let cache = AnswerCache(limit: config.cacheCountLimit)
        self.cache = cache
        self.stats = EngineStats(recorder: StatsRecorder(limit: statsLimit), cache: cache)
        self.settings = ReadMostly(Settings(config: config, chain: makeChain(accountID, config)))
        // `unowned`, not `weak`: a weak reference gives the engine a side table for good, and then
        // every retain of it (one per request, from the account table) takes the slow path. The
        // queue is the engine's own, and it starts work only from an engine method (`enqueue`) or
        // from the end of a refresh, whose completion holds the engine: it never outlives it.
        let queue = KeyQueue(concurrency: Self.refreshConcurrency) { [unowned self] key, done in
            self.startQueuedRefresh(key, done: done)
        }
        refreshQueueBox.withLock { $0 = queue }
    }

    var current: Settings { settings.value }

    public var config: AccountConfig { current.config }

    /// Runs `body` on the configuration without copying it (`ReadMostly.read`): the signature
    /// check reads a few fields on every signed request, and a copy retains every string and
    /// array of the configuration, atomic writes to memory all HTTP threads share.
    public func withConfig<R>(_ body: (AccountConfig) -> R) -> R { settings.read { body($0.config) } }

    /// The options of the request path (no copy of the whole configuration).
    public var lookupOptions: LookupOptions { settings.read { $0.lookup } }

    /// Replaces the configuration: rebuilds the upstream chain, applies the new cache limit, and
    /// forgets the backoff of failed keys (new upstreams deserve a try). With
    /// `preResolveAfterNetworkChanged`, a change of upstreams or network settings re-resolves
    /// every cached entry in the background.
    public func update(config: AccountConfig) {
        let chain = makeChain(accountID, config)
        let previous = settings.update { old in (Settings(config: config, chain: chain), old.config) }
        Log.debug(
            "account configuration applied",
            [
                ("account", accountID), ("upstreams", config.upstreams.map(\.description).joined(separator: ",")),
                ("cacheCountLimit", config.cacheCountLimit),
            ])
        backoff.clearAll()
        let evicted = cache.resize(limit: config.cacheCountLimit)
        stats.absorb(evicted)
        for (key, _) in evicted { persistence?.remove(account: accountID, key: key) }
        if !config.persistentCacheIPEnabled { persistence?.removeAll(account: accountID) }
        if config.preResolveAfterNetworkChanged && Self.networkSettingsDiffer(previous, config) {
            let queued = refreshAll()
            Log.info("account \(accountID): upstream or network settings changed; re-resolving \(queued) cached entries")
        }
    }

    /// True when the settings that decide which answers an upstream gives have changed.
    static func networkSettingsDiffer(_ old: AccountConfig, _ new: AccountConfig) -> Bool {
        old.upstreams != new.upstreams || old.localDNSFallback != new.localDNSFallback
            || old.localDNSServers != new.localDNSServers || old.ispEnable != new.ispEnable
            || old.accessKeyId != new.accessKeyId || old.timeout != new.timeout
    }

    // MARK: Resolution

    /// Resolves one (host, family) for a client on `network` (its /24 or /56, "" when unknown;
    /// used only when the account has `ispEnable`). Returns the outcome at once when the cache
    /// answers; otherwise returns nil and calls `completion` exactly once when the upstream chain
    /// has answered. `client` is whose share of the upstream budget a miss takes (nil: the
    /// service's own work).
    ///
    /// The cache answers with a fresh entry (starting its refresh-ahead when the entry is in the
    /// last tenth of its TTL), or with an expired one that may still be served (see `mayServe`)
    /// when the account reuses expired IPs or when the last attempt for it failed. Either way the
    /// refresh runs in the background, and after a failure only when its backoff has passed.
    public func resolve(
        host: HostName, family: RecordFamily, network: String = "", client: ClientID? = nil,
        completion: @escaping @Sendable (FamilyOutcome) -> Void
    ) -> FamilyOutcome? {
        if let answer = cachedResolution(host: host, family: family, network: network) { return .success(answer) }
        resolveUncached(host: host, family: family, network: network, client: client, completion: completion)
        return nil
    }

    /// The cache half of `resolve`: counts the lookup and answers it when the cache can (the
    /// same rules, refresh-ahead and background refreshes included), else returns nil and counts
    /// nothing more; the caller then calls `resolveUncached`. Takes no closure, so a hit
    /// allocates nothing beyond its answer.
    public func cachedResolution(host: HostName, family: RecordFamily, network: String = "") -> ResolvedAnswer? {
        let options = lookupOptions
        guard options.cacheEnable else { return nil }
        let key = CacheKey(host: host, family: family, network: options.ispEnable ? network : "")
        let now = clock.now()
        let hit = cache.hit(key, at: now, refreshAhead: options.schedulePrefetchEnable)
        return answer(hit, at: now, options: options) { key }
    }

    /// The same for a host (and network) still in the request's bytes (the fast path): a fresh
    /// hit builds no string. The key's network counts only when the account keeps a cache per
    /// client network, as `network` does above.
    public func cachedResolution(_ key: BorrowedCacheKey) -> ResolvedAnswer? {
        let options = lookupOptions
        guard options.cacheEnable else { return nil }
        let key = options.ispEnable || key.network.isEmpty ? key : key.withoutNetwork
        let now = clock.now()
        let hit = cache.hit(key, at: now, refreshAhead: options.schedulePrefetchEnable)
        return answer(hit, at: now, options: options) { key.owned }
    }

    /// What a lookup that found `hit` answers; `key` gives the key as a `CacheKey` for what
    /// needs one (a refresh, statistics), which a fresh hit usually does not.
    private func answer(_ hit: AnswerCache.Hit?, at now: Timestamp, options: LookupOptions, key: () -> CacheKey) -> ResolvedAnswer? {
        guard let hit else { return nil }
        let entry = hit.entry
        if !entry.isExpired(at: now) {
            metrics.hits.increment()
            if entry.isNegative { metrics.negativeHits.increment() }
            // The hit itself is counted in the cache slot (EngineStats reads it from there).
            if hit.overflowHits > 0 { stats.update(statsKey(key())) { $0.cacheDnsNum += UInt64(hit.overflowHits) } }
            if hit.startRefreshAhead { refreshInBackground(key(), settings: current, prefetch: true) }
            return ResolvedAnswer(entry: entry, at: now, source: .cache)
        }
        // An expired entry (off the hit path): the full configuration decides.
        let settings = current
        let key = key()
        if mayServe(entry, of: key.host, config: settings.config, at: now),
            options.reuseExpiredIPEnabled || backoff.hasFailed(key)
        {
            metrics.hits.increment()
            countStale(key)
            refreshInBackground(key, settings: settings, prefetch: false)
            return ResolvedAnswer(entry: entry, at: now, source: .cache)
        }
        return nil
    }

    /// The upstream half of `resolve`, after `cachedResolution` gave nothing: counts a miss and
    /// starts (or joins) the resolution; `completion` runs exactly once with its outcome. A
    /// resolution started takes from `client`'s share of the upstream budget; joining one in
    /// flight costs nothing.
    public func resolveUncached(
        host: HostName, family: RecordFamily, network: String = "", client: ClientID? = nil,
        completion: @escaping @Sendable (FamilyOutcome) -> Void
    ) {
        let settings = current
        let key = CacheKey(host: host, family: family, network: settings.lookup.ispEnable ? network : "")
        metrics.misses.increment()
        // Stale answers are counted per client served, not per failed flight.
        let waiter: @Sendable (FamilyOutcome) -> Void = { [self] outcome in
            if case .success(let answer) = outcome, answer.stale { countStale(key) }
            completion(outcome)
        }
        if !flights.join(key, waiter: waiter) {
            metrics.singleFlightJoined.increment()
            Log.debug("cache miss joined a resolution in flight (single-flight)", debugFields(key))
            return
        }
        // The caller's cache lookup may have run just before a flight for this key stored its
        // answer and ended: answer from that entry rather than start a second upstream query.
        let now = clock.now()
        if settings.config.cacheEnable, let entry = cache.peek(key), !entry.isExpired(at: now) {
            flights.complete(key, with: .success(ResolvedAnswer(entry: entry, at: now, source: .cache)))
            return
        }
        launchAfterSharedTier(key, settings: settings, client: client)
    }

    /// A client's miss (the caller leads its flight): asks the shared tier first, when there is
    /// one and the account caches. A fresh answer found there is cached here and answers with
    /// source `shared`; otherwise the upstreams are asked (holding the fleet's lock on the key
    /// if the tier gave it). Background refreshes skip this: they exist to get a newer answer.
    private func launchAfterSharedTier(_ key: CacheKey, settings: Settings, client: ClientID?) {
        let config = settings.config
        guard let sharedTier, config.cacheEnable else {
            Log.debug("cache miss: asking the upstreams", debugFields(key))
            launch(key, settings: settings, client: client)
            return
        }
        sharedTier.lookup(account: accountID, key: key, waitMilliseconds: config.timeoutMilliseconds) { [self] result in
            switch result {
            case .found(let found):
                let now = clock.now()
                guard !found.isExpired(at: now), found.originTTL > 0 else {
                    launch(key, settings: settings, client: client)
                    return
                }
                var entry = found
                entry.addresses = orderBySpeed(entry.addresses, config: config, at: now)
                store(entry, for: key, persist: config.persistentCacheIPEnabled)
                flights.complete(key, with: .success(ResolvedAnswer(entry: entry, at: now, source: .shared)))
            case .miss(let holdsLock):
                Log.debug("cache miss: not shared, asking the upstreams", debugFields(key))
                launch(key, settings: settings, client: client, holdsSharedLock: holdsLock)
            }
        }
    }

    /// True when an expired `entry` may be answered: it expired at most `maxStaleAge` ago and the
    /// host is not in `staleExcludeHosts`.
    func mayServe(_ entry: CacheEntry, of host: HostName, config: AccountConfig, at now: Timestamp) -> Bool {
        entry.age(pastExpiryAt: now) <= config.maxStaleAge && !config.isStaleExcluded(host)
    }

    private func countStale(_ key: CacheKey) {
        metrics.staleServed.increment()
        stats.update(statsKey(key)) {
            $0.staleNum += 1
            $0.cacheDnsNum += 1
        }
    }

    /// The cached answer for a key, never asking an upstream. An expired entry is returned only
    /// with `allowExpired` (marked stale), and then refreshed in the background.
    public func cachedAnswer(host: HostName, family: RecordFamily, network: String = "", allowExpired: Bool) -> ResolvedAnswer? {
        let settings = current
        let key = CacheKey(host: host, family: family, network: settings.config.ispEnable ? network : "")
        guard let entry = cache.peek(key) else { return nil }
        let now = clock.now()
        if entry.isExpired(at: now) {
            guard allowExpired else { return nil }
            refreshInBackground(key, settings: settings, prefetch: false)
        }
        return ResolvedAnswer(entry: entry, at: now, source: .cache)
    }

    /// Starts a resolution of `key` that nobody waits for, unless one is in flight already or
    /// the key's retry after a failure is not due. Returns whether one started.
    @discardableResult
    private func refreshInBackground(_ key: CacheKey, settings: Settings, prefetch: Bool, done: (@Sendable () -> Void)? = nil) -> Bool {
        guard !backoff.isWaiting(key, at: clock.now()), flights.startIfIdle(key, waiter: { _ in done?() }) else {
            Log.debug(
                "background refresh not started: in flight or backing off after a failure", debugFields(key, [("prefetch", prefetch)]))
            done?()
            return false
        }
        if prefetch {
            metrics.prefetches.increment()
            stats.update(statsKey(key)) { $0.prefetchNum += 1 }
        }
        Log.debug(
            prefetch ? "prefetch: refreshing an entry before it expires" : "refreshing an expired entry served stale", debugFields(key))
        launch(key, settings: settings)
        return true
    }

    /// Asks the upstream chain for `key` (the caller leads its single-flight) and completes the
    /// flight: a usable answer is cached, a failure backs the key off and serves the stale entry
    /// if one may be served. The query takes from `client`'s share of the upstream budget.
    private func launch(_ key: CacheKey, settings: Settings, client: ClientID? = nil, holdsSharedLock: Bool = false) {
        let config = settings.config
        if let retryAfter = budgetRefusal(for: client, config: config) {
            Log.debug("upstream budget spent (upstreamQPS): no upstream asked", debugFields(key, [("retryAfter", retryAfter)]))
            if holdsSharedLock { sharedTier?.release(account: accountID, key: key) }
            flights.complete(key, with: overBudget(key, config: config, retryAfter: retryAfter))
            return
        }
        let statsKey = statsKey(key)
        let query = UpstreamQuery(
            host: key.host, family: key.family, timeoutMilliseconds: config.timeoutMilliseconds,
            clientSubnet: key.network.isEmpty ? nil : key.network)
        let started = clock.now()
        let report: @Sendable (ChainEvent) -> Void = { [self] event in record(event, statsKey: statsKey) }
        let finish: @Sendable (ChainOutcome) -> Void = { [self] outcome in
            let result: FamilyOutcome
            let now = clock.now()
            switch outcome {
            case .answered(let answer, let source):
                backoff.clear(key)
                stats.update(statsKey) {
                    $0.successNum += 1
                    $0.recordRTT(seconds: max(0, now - started))
                }
                var entry = Self.entry(for: answer, source: source, config: config, now: now)
                entry.addresses = orderBySpeed(entry.addresses, config: config, at: now)
                if config.cacheEnable && entry.originTTL > 0 {
                    store(entry, for: key, persist: config.persistentCacheIPEnabled)
                    // Kept in the shared tier as long as it may be served here, stale window included.
                    sharedTier?.store(
                        account: accountID, key: key, entry: entry, keepSeconds: Double(entry.originTTL) + config.maxStaleAge,
                        holdsLock: holdsSharedLock)
                } else if holdsSharedLock {
                    sharedTier?.release(account: accountID, key: key)
                }
                probeSpeed(of: entry, key: key, config: config)
                // Fresh from upstream: never stale, even with a TTL of 0 (an answer not to be cached).
                result = .success(
                    ResolvedAnswer(
                        addresses: entry.addresses, ttl: entry.originTTL, originTTL: entry.originTTL, source: source,
                        nxdomain: entry.nxdomain, soa: entry.soa))
            case .failed(let timedOut, let message):
                metrics.resolveFailures.increment()
                if holdsSharedLock { sharedTier?.release(account: accountID, key: key) }
                let cached = config.cacheEnable ? cache.peek(key) : nil
                // Only keys with an entry to serve need a backoff (it is what refreshes them).
                if cached != nil { backoff.recordFailure(key, at: now) }
                if let cached,
                    !cached.isExpired(at: now) || mayServe(cached, of: key.host, config: config, at: now)
                {
                    // Nothing answered, but a cached answer that may be served beats an error.
                    result = .success(ResolvedAnswer(entry: cached, at: now, source: .cache))
                } else {
                    result = .failure(ResolveFailure(timedOut: timedOut, message: message))
                }
            }
            Log.debug("resolution finished", debugFields(key, Self.debugFields(result, seconds: max(0, now - started))))
            flights.complete(key, with: result)
        }
        settings.chain.resolve(query, clock: clock, report: report) { [self] outcome in
            // A reply that ends in a CNAME without addresses: resolve where it points.
            guard case .answered(let answer, let source) = outcome, CNAMEFollower.isDangling(answer) else {
                finish(outcome)
                return
            }
            CNAMEFollower.follow(answer, source: source, query: query, chain: settings.chain, clock: clock, report: report) {
                [self] followed, stop in
                if let stop { logCut(stop, of: key) }
                finish(followed)
            }
        }
    }

    /// One warning per host every 10 s at most for a CNAME chain cut short (answered NODATA).
    private func logCut(_ stop: CNAMEFollower.Stop, of key: CacheKey) {
        guard let suppressed = failureLog.admit("cname:\(key.host.value)", now: clock.now()) else { return }
        let why: String
        switch stop {
        case .loop(let name): why = "loops back to \(name.value)"
        case .tooLong: why = "is longer than \(CNAMEFollower.maximumLinks) links"
        }
        let more = suppressed > 0 ? " (\(suppressed) more since the last report)" : ""
        Log.warning("account \(accountID): the CNAME chain of \(key.host.value) \(key.family.typeName) \(why): answered as no data\(more)")
    }

    /// The `Retry-After` seconds when the account's upstream budget (`upstreamQPS`) refuses a
    /// query for `client` now, else nil (the query goes ahead, counted in the budget).
    func budgetRefusal(for client: ClientID?, config: AccountConfig) -> Int? {
        guard config.upstreamQPS > 0 else { return nil }
        guard case .refused(let retryAfter) = upstreamBudget.take(for: client, at: clock.now(), queriesPerSecond: config.upstreamQPS) else {
            return nil
        }
        return retryAfter
    }

    /// The outcome of a query the upstream budget refused: the cached answer if it may be served
    /// (fresh, or expired within `maxStaleAge`), else a failure carrying the `Retry-After`.
    private func overBudget(_ key: CacheKey, config: AccountConfig, retryAfter: Int) -> FamilyOutcome {
        metrics.upstreamBudgetRefusals.increment()
        let now = clock.now()
        if config.cacheEnable, let cached = cache.peek(key),
            !cached.isExpired(at: now) || mayServe(cached, of: key.host, config: config, at: now)
        {
            return .success(ResolvedAnswer(entry: cached, at: now, source: .cache))
        }
        return .failure(
            ResolveFailure(
                timedOut: false, message: "the account's upstream budget (upstreamQPS \(config.upstreamQPS)) is spent",
                retryAfter: retryAfter))
    }

    // MARK: Background refresh

    /// How far ahead the scheduled prefetch looks: its period.
    public static let prefetchInterval: Double = 60

    /// The scheduled prefetch (`schedulePrefetchEnable`): queues every entry that was requested
    /// since it was stored and has expired or expires before the next run. Returns how many keys
    /// were queued. The service calls it every `prefetchInterval` seconds.
    @discardableResult
    public func runScheduledPrefetch() -> Int {
        let config = current.config
        guard config.cacheEnable, config.schedulePrefetchEnable else { return 0 }
        let now = clock.now()
        let due = cache.requestedKeys(expiringBy: now + Self.prefetchInterval).filter { !backoff.isWaiting($0, at: now) }
        let queued = refreshQueue.enqueue(due)
        Log.debug("scheduled prefetch", [("account", accountID), ("due", due.count), ("queued", queued)])
        return queued
    }

    /// Re-resolves every cached entry in the background (`POST /v1/{account}/cache/refresh`, and
    /// `preResolveAfterNetworkChanged`). Returns how many keys were queued.
    @discardableResult
    public func refreshAll() -> Int {
        refreshQueue.enqueue(cache.keys())
    }

    /// Keys queued for a background refresh and refreshes in flight.
    public var refreshBacklog: Int { refreshQueue.backlog }

    /// One refresh from the queue: a prefetch unless it is in flight already or backing off.
    private func startQueuedRefresh(_ key: CacheKey, done: @escaping @Sendable () -> Void) {
        refreshInBackground(key, settings: current, prefetch: true, done: done)
    }

    private func record(_ event: ChainEvent, statsKey: StatsKey) {
        switch event {
        case .upstream(let name, let result, let seconds):
            Log.debug("upstream replied", debugFields(statsKey, Self.debugFields(upstream: name, result, seconds: seconds)))
            metrics.recordUpstream(name: name, result: result, seconds: seconds)
            stats.update(statsKey) { $0.recordUpstream(result) }
            if case .failure(let error) = result { logFailure(of: name, error, statsKey: statsKey) }
        case .fallback(let result, let seconds):
            Log.debug(
                "local DNS fallback replied",
                debugFields(statsKey, Self.debugFields(upstream: "local DNS fallback", result, seconds: seconds)))
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
            ttl = min(max(AccountConfig.answerDefaultTTL, config.minCacheTTL), config.maxCacheTTL)
        } else {
            ttl = min(max(answer.ttl ?? AccountConfig.answerDefaultTTL, config.minCacheTTL), config.maxCacheTTL)
        }
        return CacheEntry(
            addresses: answer.addresses, originTTL: ttl, storedAt: now, nxdomain: answer.nxdomain, origin: source, soa: answer.soa)
    }

    private func statsKey(_ key: CacheKey) -> StatsKey { StatsKey(key) }

    // MARK: Cache management

    private func store(_ entry: CacheEntry, for key: CacheKey, persist: Bool) {
        let evicted = cache.set(entry, for: key)
        stats.absorb(evicted)
        guard persist, let persistence else { return }
        persistence.upsert(account: accountID, key: key, entry: entry)
        for (old, _) in evicted { persistence.remove(account: accountID, key: old) }
    }

    /// Puts entries loaded from the store back into the cache (no write-back).
    public func restore(_ entries: [(CacheKey, CacheEntry)]) {
        for (key, entry) in entries { stats.absorb(cache.set(entry, for: key)) }
    }

    /// Every cached entry, sorted by host, family and network.
    public func cachedEntries() -> [(CacheKey, CacheEntry)] {
        cache.snapshot().sorted {
            ($0.0.host.value, $0.0.family.rawValue, $0.0.network) < ($1.0.host.value, $1.0.family.rawValue, $1.0.network)
        }
    }

    /// One page of the cache in shard and slot order (`AnswerCache.page`): O(scanLimit), no sort.
    public func cachePage(from position: AnswerCache.Position, limit: Int, scanLimit: Int) -> (
        entries: [AnswerCache.Listed], next: AnswerCache.Position?
    ) {
        cache.page(from: position, limit: limit, scanLimit: scanLimit)
    }

    /// Evicts every entry of `host`; returns how many.
    public func evict(host: HostName) -> Int {
        let removed = cache.remove(host: host)
        stats.absorb(removed)
        for (key, _) in removed { persistence?.remove(account: accountID, key: key) }
        return removed.count
    }

    /// Empties the cache; returns how many entries it held.
    public func evictAll() -> Int {
        persistence?.removeAll(account: accountID)
        let removed = cache.removeAll()
        stats.absorb(removed.departures)
        return removed.count
    }

    public var cacheCount: Int { cache.count }

    public var now: Timestamp { clock.now() }

    /// Asks the store to commit every cache change made so far; `completion` says whether they
    /// are durable (at once, `.durable`, without a store). Never waits for a failing store's retries.
    public func persisted(completion: @escaping @Sendable (FlushOutcome) -> Void) {
        if let persistence { persistence.flush(completion: completion) } else { completion(.durable) }
    }

    /// True when an answer the engine just gave for this account was written to its store (so
    /// it is durable once `persisted` says `.durable`): the account caches and persists, and the
    /// answer was cached (a TTL above 0) or came from the cache.
    public func persists(_ answer: ResolvedAnswer) -> Bool {
        let config = current.config
        return persistence != nil && config.cacheEnable && config.persistentCacheIPEnabled && answer.originTTL > 0
    }
}
