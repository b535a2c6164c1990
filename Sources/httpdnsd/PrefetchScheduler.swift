import Dispatch
import HTTPDNSCore

/// Runs every account's scheduled prefetch (`schedulePrefetchEnable`) once per interval on a
/// background queue; the refreshes themselves run on the upstream threads.
final class PrefetchScheduler {
    private let timer: DispatchSourceTimer

    init(registry: AccountRegistry, interval: Double = ResolverEngine.prefetchInterval) {
        let queue = DispatchQueue(label: "httpdnsd.prefetch", qos: .utility)
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .seconds(1))
        timer.setEventHandler {
            for engine in registry.all {
                let queued = engine.runScheduledPrefetch()
                if queued > 0 { Log.info("account \(engine.accountID): scheduled prefetch queued \(queued) entries") }
            }
        }
        timer.resume()
    }

    func stop() { timer.cancel() }
}
