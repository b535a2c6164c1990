/// A token bucket of `burst` tokens refilled at `rate` tokens per second, kept as one number:
/// the time at which it will be full again (the "theoretical arrival time" of GCRA, RFC 2698's
/// equivalent of a token bucket). Taking a token moves that time `1 / rate` seconds on; a request
/// is refused when that would put it more than `burst / rate` seconds ahead of now.
///
/// A value with no lock and no clock: callers pass the time (any `WallClock`) and the parameters
/// (so a change of configuration applies at the next request). A bucket whose `fullAt` has
/// passed is indistinguishable from a new one, which is what lets a table forget it.
public struct TokenBucket: Sendable, Equatable {
    /// When the bucket is (or will be) full again; a bucket full since then has `fullAt <= now`.
    public private(set) var fullAt: Timestamp

    /// A full bucket.
    public init() { fullAt = 0 }

    /// What `take` decided.
    public enum Decision: Sendable, Equatable {
        case allowed
        /// No token: try again after this many whole seconds (at least 1), the `Retry-After`.
        case refused(retryAfter: Int)
    }

    /// Takes one token at `now` if there is one. `rate` > 0 tokens per second, `burst` ≥ 1 tokens.
    /// A clock that went back is treated as standing still.
    public mutating func take(at now: Timestamp, rate: Double, burst: Double) -> Decision {
        let interval = 1 / rate
        let start = max(fullAt, now)
        let next = start + interval
        // The bucket holds (burst / rate) seconds of tokens; one more must still fit in it. Today's
        // Unix timestamps are multiples of 2^-22 s (about 0.24 µs): each addition to one rounds by up
        // to half that, and `fullAt` collects one such rounding per token taken. `slack` covers
        // them, so that the clock's reading never decides: without it a rate of 0.7/s with a
        // burst of 2 let only one request through, and 0.15/s with a burst of 1 none. Under half
        // an interval, it never lets one token more through.
        let slack = min((burst + 2) * max(now.ulp, fullAt.ulp), interval / 2)
        let ahead = next - now
        if ahead > burst * interval + slack {
            let wait = ahead - burst * interval - slack
            return .refused(retryAfter: max(1, Int(wait.rounded(.up))))
        }
        fullAt = next
        return .allowed
    }

    /// Gives back the token a `take` at `now` took (the request it was taken for turned out not
    /// to be one this bucket meters). Never fills the bucket past full.
    public mutating func refund(at now: Timestamp, rate: Double) {
        fullAt = max(now, fullAt - 1 / rate)
    }

    /// True when the bucket is full at `now` (it can be forgotten without changing any decision).
    public func isFull(at now: Timestamp) -> Bool { fullAt <= now }

    /// Tokens left at `now` (for tests and diagnostics).
    public func tokens(at now: Timestamp, rate: Double, burst: Double) -> Double {
        max(0, burst - max(0, fullAt - now) * rate)
    }
}
