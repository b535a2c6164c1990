/// Background refreshes: refresh-ahead and stale entries one at a time, the scheduled prefetch
/// and whole-cache re-resolution through the account's bounded queue (`KeyQueue`).
extension ResolverEngine {
    /// Starts a resolution of `key` that nobody waits for, unless one is in flight already or
    /// the key's retry after a failure is not due, or the account's `domains` now refuses the
    /// name (its entry is never answered again, and no upstream is asked for it). Returns
    /// whether one started.
    @discardableResult
    func refreshInBackground(_ key: CacheKey, settings: Settings, prefetch: Bool, done: (@Sendable () -> Void)? = nil) -> Bool {
        if settings.lookup.hasDomainPolicy && !settings.config.domains.allows(key.host) {
            done?()
            return false
        }
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
    func startQueuedRefresh(_ key: CacheKey, done: @escaping @Sendable () -> Void) {
        refreshInBackground(key, settings: current, prefetch: true, done: done)
    }
}
