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
        /// `config.queryLog`, read on every logged lookup without reaching into the configuration.
        let queryLog: QueryLogSettings

        init(config: AccountConfig, chain: UpstreamChain) {
            self.config = config
            self.chain = chain
            self.lookup = LookupOptions(config)
            self.queryLog = config.queryLog
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
        /// The account's `domains` may refuse a name: every lookup checks it (`allows`).
        public let hasDomainPolicy: Bool
        /// The account's `queryLog` is on: lookups are logged (`queryLogSettings` says how).
        public let logsQueries: Bool
        /// The account has `rules`: a name some rule names is answered apart from the cache
        /// (`hasRule(for:)`, `ruleAnswer`).
        public let hasRules: Bool
        /// The account has a `dns64Prefix`: an AAAA answer without addresses is looked at again
        /// (`synthesizedAAAA`).
        public let synthesizesAAAA: Bool

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
            hasDomainPolicy = !config.domains.isUnrestricted
            logsQueries = config.queryLog.enabled && config.queryLog.sampleRate > 0
            hasRules = !config.rules.isEmpty
            synthesizesAAAA = config.dns64Prefix != nil
        }
    }

    public typealias ChainFactory = @Sendable (_ accountID: String, _ config: AccountConfig) -> UpstreamChain

    public let accountID: String
    public let stats: EngineStats
    public let metrics = EngineMetrics()
    let cache: AnswerCache
    let settings: ReadMostly<Settings>
    let flights = SingleFlight()
    let clock: any WallClock
    let persistence: (any CachePersistence)?
    private let makeChain: ChainFactory
    let failureLog = LogThrottle(interval: 10)
    let backoff = RefreshBackoff()
    /// Probes the addresses of answers when the account has `speedTestEnable` (nil: never).
    let speedTester: (any SpeedTester)?
    /// Measured connection times per address, shared by every answer of the account.
    public let rtt = RTTTable()
    /// What the `healthCheck` of the account's rules found of their addresses (10 s per result).
    let ruleHealth = RTTTable(capacity: 10_000, ttl: 10)
    /// Rules whose addresses are being checked right now (one check per rule at a time).
    let ruleChecks = Mutex<Set<String>>([])
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
    var refreshQueue: KeyQueue { refreshQueueBox.withLock { $0! } }

    public init(
        accountID: String, config: AccountConfig, clock: any WallClock, persistence: (any CachePersistence)?,
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
        // The last hour starts with the engine, its counters at zero (`ActivitySampler` samples on).
        metrics.recent.sample(ActivityCounts(), at: clock.now())
    }

    var current: Settings { settings.value }

    public var config: AccountConfig { current.config }

    /// Runs `body` on the configuration without copying it (`ReadMostly.read`): the signature
    /// check reads a few fields on every signed request, and a copy retains every string and
    /// array of the configuration, atomic writes to memory all HTTP threads share.
    public func withConfig<R>(_ body: (AccountConfig) -> R) -> R { settings.read { body($0.config) } }

    /// The options of the request path (no copy of the whole configuration).
    public var lookupOptions: LookupOptions { settings.read { $0.lookup } }

    /// The account's `queryLog`, read in place; asked only when `LookupOptions.logsQueries`.
    public var queryLogSettings: QueryLogSettings { settings.read { $0.queryLog } }

    /// Whether the account's `domains` lets `name` (a request's bytes, any ASCII case) be
    /// resolved; read in place, allocating nothing. Callers ask only when
    /// `LookupOptions.hasDomainPolicy`.
    public func allows(_ name: UnsafeRawBufferPointer) -> Bool { settings.read { $0.config.domains.allows(name) } }

    public func allows(_ host: HostName) -> Bool { settings.read { $0.config.domains.allows(host) } }

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
    /// A name the account's `domains` refuses fails at once (`ResolveFailure.notAllowed`), even
    /// when cached.
    public func resolve(
        host: HostName, family: RecordFamily, network: String = "", client: ClientID? = nil,
        completion: @escaping @Sendable (FamilyOutcome) -> Void
    ) -> FamilyOutcome? {
        if lookupOptions.hasDomainPolicy && !allows(host) { return .failure(.notAllowed(host)) }
        let key = cacheKey(host: host, family: family, network: network)
        if let answer = cachedResolution(key) { return .success(answer) }
        resolveUncached(key, client: client, completion: completion)
        return nil
    }

    /// The cache half of `resolve`: counts the lookup and answers it when the cache can (the
    /// same rules, refresh-ahead and background refreshes included), else returns nil and counts
    /// nothing more; the caller then calls `resolveUncached`. Takes no closure, so a hit
    /// allocates nothing beyond its answer.
    public func cachedResolution(host: HostName, family: RecordFamily, network: String = "") -> ResolvedAnswer? {
        cachedResolution(cacheKey(host: host, family: family, network: network))
    }

    /// The same for a key from `cacheKey`, which a caller that may go on to `resolveUncached`
    /// builds once for both.
    public func cachedResolution(_ key: CacheKey) -> ResolvedAnswer? {
        let options = lookupOptions
        guard options.cacheEnable else { return nil }
        let now = clock.now()
        let hit = cache.hit(key, at: now, refreshAhead: options.schedulePrefetchEnable)
        let found = answer(hit, at: now, options: options) { key }
        // DNS64: only an AAAA answer without addresses of an account with a prefix looks further.
        if key.family == .aaaa && options.synthesizesAAAA, let found, found.addressList.isEmpty {
            return synthesizedAAAA(found, a: CacheKey(host: key.host, family: .a, network: key.network), at: now, options: options)
        }
        return found
    }

    /// The key this account caches `host`'s `family` under for a client in `network`: the network
    /// counts only when the account keeps a cache per client network (`ispEnable`).
    public func cacheKey(host: HostName, family: RecordFamily, network: String = "") -> CacheKey {
        CacheKey(host: host, family: family, network: lookupOptions.ispEnable ? network : "")
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
        let found = answer(hit, at: now, options: options) { key.owned }
        if key.family == .aaaa && options.synthesizesAAAA, let found, found.addressList.isEmpty {
            let a = BorrowedCacheKey(unchecked: UnsafeRawBufferPointer(key.host), family: .a, network: UnsafeRawBufferPointer(key.network))
            return synthesizedAAAA(found, a: a.owned, at: now, options: options)
        }
        return found
    }

    /// What a lookup that found `hit` answers; `key` gives the key as a `CacheKey` for what
    /// needs one (a refresh, statistics), which a fresh hit usually does not.
    func answer(_ hit: AnswerCache.Hit?, at now: Timestamp, options: LookupOptions, key: () -> CacheKey) -> ResolvedAnswer? {
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
    /// flight costs nothing. A name the account's `domains` refuses completes at once with
    /// `ResolveFailure.notAllowed`, no upstream asked.
    public func resolveUncached(
        host: HostName, family: RecordFamily, network: String = "", client: ClientID? = nil,
        completion: @escaping @Sendable (FamilyOutcome) -> Void
    ) {
        resolveUncached(cacheKey(host: host, family: family, network: network), client: client, completion: completion)
    }

    /// The same for a key from `cacheKey`.
    public func resolveUncached(_ key: CacheKey, client: ClientID? = nil, completion: @escaping @Sendable (FamilyOutcome) -> Void) {
        let settings = current
        if settings.lookup.hasDomainPolicy && !settings.config.domains.allows(key.host) {
            completion(.failure(.notAllowed(key.host)))
            return
        }
        metrics.misses.increment()
        let waiter = key.family == .aaaa && settings.lookup.synthesizesAAAA ? dns64(completion, key: key, client: client) : completion
        if !flights.join(key, waiter: waiter) {
            metrics.singleFlightJoined.increment()
            Log.debug("cache miss joined a resolution in flight (single-flight)", debugFields(key))
            return
        }
        // The caller's cache lookup may have run just before a flight for this key stored its
        // answer and ended: answer from that entry rather than start a second upstream query.
        let now = clock.now()
        if settings.config.cacheEnable, let entry = cache.peek(key), !entry.isExpired(at: now) {
            completeFlight(key, with: .success(ResolvedAnswer(entry: entry, at: now, source: .cache)))
            return
        }
        launchAfterSharedTier(key, settings: settings, client: client)
    }

    /// A client's miss (the caller leads its flight): asks the shared tier first, when there is
    /// one and the account caches. A fresh answer found there is cached here and answers with
    /// source `shared`; otherwise the upstreams are asked (holding the fleet's lock on the key
    /// if the tier gave it). Background refreshes skip this: they exist to get a newer answer.
    private func launchAfterSharedTier(_ key: CacheKey, settings: Settings, client: ClientID?) {
        guard let sharedTier, settings.lookup.cacheEnable else {
            Log.debug("cache miss: asking the upstreams", debugFields(key))
            launch(key, settings: settings, client: client)
            return
        }
        // A tier that answers on another thread: the rest runs back on the request's thread's
        // loop when it has one (see `OriginLoop`). One that answers on that loop itself (its
        // connection rides on the thread) or on a thread without a loop: at once.
        let origin = OriginLoop.current
        sharedTier.lookup(account: accountID, key: key, waitMilliseconds: settings.config.timeoutMilliseconds) { [self] result in
            guard let origin, OriginLoop.current !== origin else {
                afterSharedTier(result, key, settings: settings, client: client)
                return
            }
            origin.run { [self] in afterSharedTier(result, key, settings: settings, client: client) }
        }
    }

    /// What the shared tier said: a fresh answer answers the flight, anything else asks the
    /// upstreams.
    private func afterSharedTier(_ result: SharedLookupResult, _ key: CacheKey, settings: Settings, client: ClientID?) {
        switch result {
        case .found(let found):
            let now = clock.now()
            guard !found.isExpired(at: now), found.originTTL > 0 else {
                launch(key, settings: settings, client: client)
                return
            }
            var entry = found
            orderBySpeed(&entry, config: settings.config, at: now)
            store(entry, for: key, persist: settings.config.persistentCacheIPEnabled)
            completeFlight(key, with: .success(ResolvedAnswer(entry: entry, at: now, source: .shared)))
        case .miss(let holdsLock):
            Log.debug("cache miss: not shared, asking the upstreams", debugFields(key))
            launch(key, settings: settings, client: client, holdsSharedLock: holdsLock)
        }
    }

    /// True when an expired `entry` may be answered: it expired at most `maxStaleAge` ago (the
    /// host's `hostOverrides` rule's, else the account's) and the host is not in `staleExcludeHosts`.
    func mayServe(_ entry: CacheEntry, of host: HostName, config: AccountConfig, at now: Timestamp) -> Bool {
        let maxStaleAge = config.hostOverrides.rule(for: host)?.maxStaleAge ?? config.maxStaleAge
        return entry.age(pastExpiryAt: now) <= maxStaleAge && !config.isStaleExcluded(host)
    }

    /// Ends `key`'s flight with `result`. A stale answer is counted once per client it serves,
    /// not once per flight.
    func completeFlight(_ key: CacheKey, with result: FamilyOutcome) {
        flights.complete(key, with: result) { clients in
            if case .success(let answer) = result, answer.stale { countStale(key, clients: clients) }
        }
    }

    private func countStale(_ key: CacheKey, clients: Int = 1) {
        metrics.staleServed.add(UInt64(clients), ordering: .relaxed)
        stats.update(statsKey(key)) {
            $0.staleNum += UInt64(clients)
            $0.cacheDnsNum += UInt64(clients)
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

    func statsKey(_ key: CacheKey) -> StatsKey { StatsKey(key) }
}
