/// Waits that double after each consecutive failure up to a ceiling: `initial`, twice that, four
/// times, ... `maximum`. The one schedule every retry here follows (a key's stale refresh, the
/// store's writes, a Redis reconnection); each keeps its own failure count.
public struct ExponentialBackoff: Sendable, Equatable {
    /// Seconds after the first failure.
    public let initial: Double
    /// Longest wait, seconds.
    public let maximum: Double

    public init(initial: Double, maximum: Double) {
        self.initial = initial
        self.maximum = maximum
    }

    /// Seconds to wait after the `failures`-th failure in a row (1: `initial`).
    public func delay(afterFailures failures: Int) -> Double {
        min(maximum, initial * Double(1 << min(max(failures - 1, 0), 20)))
    }
}
