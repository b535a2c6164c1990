import HTTPDNSCore
import Synchronization

/// A `WallClock` that only moves when a test moves it, so TTL expiry and RTT statistics are tested
/// without sleeping. Safe to read and move from any thread.
public final class ManualClock: WallClock {
    private let current: Mutex<Timestamp>

    /// Starts at `start` (seconds since 1970; a fixed, recent default so stored timestamps look real).
    public init(start: Timestamp = 1_700_000_000) {
        current = Mutex(start)
    }

    public func now() -> Timestamp {
        current.withLock { $0 }
    }

    /// Moves the clock forward by `seconds` (negative moves it back).
    public func advance(by seconds: Double) {
        current.withLock { $0 += seconds }
    }

    /// Sets the clock to `timestamp`.
    public func set(_ timestamp: Timestamp) {
        current.withLock { $0 = timestamp }
    }
}
