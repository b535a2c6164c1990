import Dispatch
import HTTPDNSCore

/// Runs every account's scheduled prefetch (`schedulePrefetchEnable`) once per interval on a
/// background queue; the refreshes themselves run on the upstream threads. Each tick also
/// releases the account tables replaced more than a grace period ago
/// (`AccountRegistry.reclaimRetired`): after a burst of admin writes nothing else would.
final class PrefetchScheduler {
    private let timer: DispatchSourceTimer

    init(registry: AccountRegistry, interval: Double = ResolverEngine.prefetchInterval) {
        let queue = DispatchQueue(label: "httpdnsd.prefetch", qos: .utility)
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .seconds(1))
        timer.setEventHandler {
            registry.reclaimRetired()
            for engine in registry.all {
                let queued = engine.runScheduledPrefetch()
                if queued > 0 { Log.info("account \(engine.accountID): scheduled prefetch queued \(queued) entries") }
            }
        }
        timer.resume()
    }

    func stop() { timer.cancel() }
}
