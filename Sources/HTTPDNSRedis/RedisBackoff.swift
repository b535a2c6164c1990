import HTTPDNSCore

/// The delays between reconnection attempts: `initial` doubling up to `maximum`, back to
/// `initial` once a connection is ready. A value (no clock): the loop asks it for the next delay.
struct RedisBackoff: Sendable {
    let schedule: ExponentialBackoff
    private(set) var failures = 0

    init(initial: Double = 0.1, maximum: Double = 5) {
        schedule = ExponentialBackoff(initial: initial, maximum: maximum)
    }

    /// Seconds to wait after one more failed attempt.
    mutating func nextDelay() -> Double {
        failures += 1
        return schedule.delay(afterFailures: failures)
    }

    mutating func reset() { failures = 0 }
}
