/// Asking the upstreams for a key: within the account's budget, the answer cached and shared,
/// and every reply recorded in metrics, statistics and throttled warnings.
extension ResolverEngine {
    /// Asks the upstream chain for `key` (the caller leads its single-flight) and completes the
    /// flight (`complete`). The query takes from `client`'s share of the upstream budget.
    func launch(_ key: CacheKey, settings: Settings, client: ClientID? = nil, holdsSharedLock: Bool = false) {
        if let retryAfter = budgetRefusal(for: client, config: settings.config) {
            Log.debug("upstream budget spent (upstreamQPS): no upstream asked", debugFields(key, [("retryAfter", retryAfter)]))
            if holdsSharedLock { sharedTier?.release(account: accountID, key: key) }
            completeFlight(key, with: overBudget(key, config: settings.config, retryAfter: retryAfter))
            return
        }
        UpstreamResolution(engine: self, key: key, settings: settings, holdsSharedLock: holdsSharedLock).start()
    }

    /// Completes the flight of `resolution` with its chain's `outcome`: a usable answer is
    /// cached, a failure backs the key off and serves the stale entry if one may be served.
    func complete(_ resolution: UpstreamResolution, _ outcome: ChainOutcome) {
        // The configuration is read through the shared settings and the key in place: a copy of
        // either would retain and release its strings and arrays.
        let settings = resolution.settings
        let result: FamilyOutcome
        let now = clock.now()
        switch outcome {
        case .answered(let answer, let source):
            backoff.clear(resolution.key)
            stats.update(resolution.statsKey) {
                $0.successNum += 1
                $0.recordRTT(seconds: max(0, now - resolution.started))
            }
            let override = settings.config.hostOverrides.rule(for: resolution.key.host)
            var entry = Self.entry(for: answer, source: source, config: settings.config, override: override, now: now)
            orderBySpeed(&entry, config: settings.config, at: now)
            if settings.config.cacheEnable && entry.originTTL > 0 && override?.cache != false {
                store(entry, for: resolution.key, persist: settings.config.persistentCacheIPEnabled)
                // Kept in the shared tier as long as it may be served here, stale window included.
                sharedTier?.store(
                    account: accountID, key: resolution.key, entry: entry,
                    keepSeconds: Double(entry.originTTL) + (override?.maxStaleAge ?? settings.config.maxStaleAge),
                    holdsLock: resolution.holdsSharedLock)
            } else if resolution.holdsSharedLock {
                sharedTier?.release(account: accountID, key: resolution.key)
            }
            probeSpeed(of: entry, key: resolution.key, config: settings.config)
            // Fresh from upstream: never stale, even with a TTL of 0 (an answer not to be cached).
            result = .success(
                ResolvedAnswer(
                    addressList: entry.addressList, ttl: entry.originTTL, originTTL: entry.originTTL, source: source,
                    nxdomain: entry.nxdomain, soa: entry.soa))
        case .failed(let timedOut, let message):
            metrics.resolveFailures.increment()
            if resolution.holdsSharedLock { sharedTier?.release(account: accountID, key: resolution.key) }
            let cached = settings.config.cacheEnable ? cache.peek(resolution.key) : nil
            // Only keys with an entry to serve need a backoff (it is what refreshes them).
            if cached != nil { backoff.recordFailure(resolution.key, at: now) }
            if let cached, !cached.isExpired(at: now) || mayServe(cached, of: resolution.key.host, config: settings.config, at: now) {
                // Nothing answered, but a cached answer that may be served beats an error.
                result = .success(ResolvedAnswer(entry: cached, at: now, source: .cache))
            } else {
                result = .failure(ResolveFailure(timedOut: timedOut, message: message))
            }
        }
        Log.debug("resolution finished", debugFields(resolution.key, Self.debugFields(result, seconds: max(0, now - resolution.started))))
        completeFlight(resolution.key, with: result)
    }

    /// One warning per host every 10 s at most for a CNAME chain cut short (answered NODATA).
    func logCut(_ stop: CNAMEFollower.Stop, of key: CacheKey) {
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

    /// Counts one reply of the chain: metrics, the statistics record, a throttled warning.
    func record(_ event: ChainEvent, statsKey: StatsKey) {
        switch event {
        case .upstream(let name, let reply, let seconds):
            Log.debug("upstream replied", debugFields(statsKey, Self.debugFields(upstream: name, reply, seconds: seconds)))
            metrics.recordUpstream(name: name, reply: reply, seconds: seconds)
            stats.update(statsKey) { $0.recordUpstream(reply) }
            if case .failed(let error) = reply { logFailure(of: name, error, statsKey: statsKey) }
        case .fallback(let reply, let seconds):
            Log.debug(
                "local DNS fallback replied",
                debugFields(statsKey, Self.debugFields(upstream: "local DNS fallback", reply, seconds: seconds)))
            if case .answered = reply { metrics.fallbackSuccess.increment() } else { metrics.fallbackFailure.increment() }
            stats.update(statsKey) {
                $0.gobackLocaldnsNum += 1
                if case .failed = reply { $0.localErro += 1 }
            }
            if case .failed(let error) = reply { logFailure(of: "local DNS fallback", error, statsKey: statsKey) }
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
    /// not negative-cached at all. A `hostOverrides` rule with a `ttl` (`override`) sets a
    /// positive answer's TTL and caps a negative one's.
    public static func entry(
        for answer: UpstreamAnswer, source: AnswerSource, config: AccountConfig, override: HostOverrides.Rule? = nil, now: Timestamp
    ) -> CacheEntry {
        var ttl: UInt32
        if answer.isNegative {
            if answer.negativeTTL == nil && answer.ttl == nil && !answer.nxdomain && source == .upstream {
                ttl = 0
            } else {
                ttl = min(answer.negativeTTL ?? config.maxNegativeCache, config.maxNegativeCache)
            }
        } else if let fixed = override?.ttl {
            ttl = fixed
        } else if source == .localdns {
            ttl = min(max(AccountConfig.answerDefaultTTL, config.minCacheTTL), config.maxCacheTTL)
        } else {
            ttl = min(max(answer.ttl ?? AccountConfig.answerDefaultTTL, config.minCacheTTL), config.maxCacheTTL)
        }
        if answer.isNegative, let cap = override?.ttl { ttl = min(ttl, cap) }
        return CacheEntry(
            addressList: answer.addressList, originTTL: ttl, storedAt: now, nxdomain: answer.nxdomain, origin: source, soa: answer.soa)
    }
}
