import HTTPDNSCore
import HTTPDNSLoop

#if canImport(Glibc)
    import Glibc
#endif

extension LoopServices {
    /// What the Redis connections' loops use: HTTPDNSCore's thread names and `LoopCall.report`.
    static let service = LoopServices(nameThread: { ThreadName.setCurrent($0) }, report: { LoopCall.report($0) })
}

extension LoopCall {
    private static let throttle = LogThrottle(interval: 10)

    /// Logs a failure the loop survives (a socket it could not watch, an action a library
    /// refused): one line per call every 10 s at most, with the count held back.
    static func report(_ failure: Failure) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        guard let suppressed = throttle.admit(failure.call, now: Double(now.tv_sec)) else { return }
        let more = suppressed > 0 ? " (\(suppressed) more since the last report)" : ""
        Log.error("event loop: \(failure)\(more)")
    }
}
