/// The delays between reconnection attempts: `initial` doubling up to `maximum`, back to
/// `initial` once a connection is ready. A value (no clock): the loop asks it for the next delay.
struct RedisBackoff: Sendable {
    var initial: Double = 0.1
    var maximum: Double = 5
    private(set) var failures = 0

    init(initial: Double = 0.1, maximum: Double = 5) {
        self.initial = initial
        self.maximum = maximum
    }

    /// Seconds to wait after one more failed attempt.
    mutating func nextDelay() -> Double {
        let delay = min(maximum, initial * Double(1 << min(failures, 20)))
        failures += 1
        return delay
    }

    mutating func reset() { failures = 0 }
}
