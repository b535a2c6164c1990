import Dispatch
import HTTPDNSCore
import HTTPDNSServer

/// Samples every account's running totals and lookup request durations once a minute into its
/// last hour (`EngineMetrics.recent`), which `GET /v1/{account}/stats/recent` and the console's
/// chart read.
/// Runs on a background queue; the lookup path does not see it.
final class ActivitySampler {
    static let interval = 60.0
    private let timer: DispatchSourceTimer

    init(registry: AccountRegistry, clock: any WallClock = SystemClock()) {
        let queue = DispatchQueue(label: "httpdnsd.activity", qos: .utility)
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: Self.interval, leeway: .seconds(1))
        timer.setEventHandler {
            let now = clock.now()
            for engine in registry.all {
                let metrics = engine.metrics
                metrics.recent.sample(metrics.activityTotals, durations: metrics.lookupDurations, at: now)
            }
        }
        timer.resume()
    }

    func stop() { timer.cancel() }
}
