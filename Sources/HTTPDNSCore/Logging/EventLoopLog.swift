#if canImport(Glibc)
    import Glibc
#endif

/// The log of failures the event loops survive (a socket a loop could not watch, an action a
/// library refused), which HTTPDNSUpstream and HTTPDNSRedis give their loops: one line per
/// failing call every 10 s at most, with the count held back. One throttle for every loop, so the
/// same call failing on several loops at once is still one line.
public enum EventLoopLog {
    private static let throttle = LogThrottle(interval: 10)

    /// Logs `failure` (what failed and why) for the call named `call`, unless a failure of that
    /// call was logged less than 10 s ago.
    public static func failure(call: String, _ failure: String) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        guard let suppressed = throttle.admit(call, now: Double(now.tv_sec)) else { return }
        let more = suppressed > 0 ? " (\(suppressed) more since the last report)" : ""
        Log.error("event loop: \(failure)\(more)")
    }
}
