/// The connection speed test (`speedTestEnable`, `speedPort`): answers with several addresses are
/// probed in the background, never on the request path; the results are remembered per address
/// (`RTTTable`) and every answer lists its addresses fastest first, unreachable ones last.
extension ResolverEngine {
    /// Puts `entry`'s addresses in the order clients should try them: by measured connection
    /// time when the account runs the speed test, else as the upstream gave them (the entry is
    /// then left untouched: its addresses are not turned into text and back).
    func orderBySpeed(_ entry: inout CacheEntry, config: AccountConfig, at now: Timestamp) {
        guard config.speedTestEnable, entry.addressList.count > 1 else { return }
        entry.addresses = rtt.order(entry.addresses, at: now)
    }

    /// Probes the addresses of a just-stored answer unless every one has a fresh measurement or a
    /// probe of the key runs already; then re-sorts the cached entry in place (if it is still the
    /// same entry) so that later hits cost nothing extra.
    func probeSpeed(of entry: CacheEntry, key: CacheKey, config: AccountConfig) {
        guard config.speedTestEnable, let speedTester, entry.addresses.count > 1,
            rtt.needsProbe(entry.addresses, at: now),
            probing.withLock({ $0.insert(key).inserted })
        else { return }
        metrics.speedTestRuns.increment()
        speedTester.probe(entry.addresses, port: config.speedPort, timeout: config.speedTestTimeout) { [self] results in
            let now = self.now
            rtt.record(results, at: now)
            for result in results.values {
                if case .reachable = result { metrics.speedProbesReachable.increment() } else { metrics.speedProbesUnreachable.increment() }
            }
            cache.modify(key, storedAt: entry.storedAt) { $0.addresses = rtt.order($0.addresses, at: now) }
            probing.withLock { _ = $0.remove(key) }
        }
    }
}
