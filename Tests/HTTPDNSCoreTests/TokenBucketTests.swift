import HTTPDNSCore
import Testing

/// `TokenBucket`: `burst` requests at once, then `rate` per second, with a whole-second
/// `Retry-After`, on an injected time.
@Suite struct TokenBucketTests {
    let start: Timestamp = 1_700_000_000

    @Test func aFullBucketAllowsBurstRequestsAtOnceThenRefuses() {
        var bucket = TokenBucket()
        for index in 0..<5 {
            #expect(bucket.take(at: start, rate: 2, burst: 5) == .allowed, "request \(index)")
        }
        #expect(bucket.take(at: start, rate: 2, burst: 5) == .refused(retryAfter: 1))
        #expect(bucket.tokens(at: start, rate: 2, burst: 5) < 1e-9)
    }

    @Test func tokensComeBackAtTheRateAndNeverBeyondTheBurst() {
        var bucket = TokenBucket()
        for _ in 0..<4 { _ = bucket.take(at: start, rate: 2, burst: 4) }
        #expect(bucket.take(at: start + 0.4, rate: 2, burst: 4) != .allowed)
        // Half a second at 2/s is one token.
        #expect(bucket.take(at: start + 0.5, rate: 2, burst: 4) == .allowed)
        #expect(bucket.take(at: start + 0.5, rate: 2, burst: 4) != .allowed)
        // A long idle time refills to the burst, not past it.
        let later = start + 3600
        #expect(bucket.isFull(at: later))
        for _ in 0..<4 { #expect(bucket.take(at: later, rate: 2, burst: 4) == .allowed) }
        #expect(bucket.take(at: later, rate: 2, burst: 4) != .allowed)
    }

    @Test func retryAfterIsTheWaitForOneTokenRoundedUpToWholeSeconds() {
        var bucket = TokenBucket()
        #expect(bucket.take(at: start, rate: 0.25, burst: 1) == .allowed)
        // One token every 4 s.
        #expect(bucket.take(at: start, rate: 0.25, burst: 1) == .refused(retryAfter: 4))
        #expect(bucket.take(at: start + 2.5, rate: 0.25, burst: 1) == .refused(retryAfter: 2))
        #expect(bucket.take(at: start + 3.99, rate: 0.25, burst: 1) == .refused(retryAfter: 1))
        #expect(bucket.take(at: start + 4, rate: 0.25, burst: 1) == .allowed)
        // A fast rate still says at least one second.
        var fast = TokenBucket()
        _ = fast.take(at: start, rate: 1000, burst: 1)
        #expect(fast.take(at: start, rate: 1000, burst: 1) == .refused(retryAfter: 1))
    }

    /// At Unix-time magnitudes, adding an interval that is not a multiple of 2^-22 s rounds: the
    /// decisions and the Retry-After must not depend on where the clock happens to read.
    @Test func theBurstAndTheRetryAfterDoNotDependOnTheClockReading() {
        for now in [start, start + 0.123_456_7, 1_764_000_000.987_654, 2_100_000_000.5] {
            for (rate, burst) in [(0.7, 2.0), (0.15, 1.0), (1.5, 3.0), (3.0, 6.0), (20.0, 20.0), (0.3, 1.0)] {
                var bucket = TokenBucket()
                for index in 0..<Int(burst) {
                    #expect(
                        bucket.take(at: now, rate: rate, burst: burst) == .allowed,
                        "rate \(rate), burst \(burst), request \(index) at \(now)")
                }
                let wait = Int((1 / rate).rounded(.up))
                #expect(
                    bucket.take(at: now, rate: rate, burst: burst) == .refused(retryAfter: wait), "rate \(rate), burst \(burst) at \(now)")
            }
            // A whole-second interval reached exactly is that many seconds, not one more.
            var tenth = TokenBucket()
            _ = tenth.take(at: now, rate: 0.1, burst: 1)
            #expect(tenth.take(at: now, rate: 0.1, burst: 1) == .refused(retryAfter: 10))
        }
    }

    @Test func aRefusedRequestTakesNothing() {
        var bucket = TokenBucket()
        _ = bucket.take(at: start, rate: 1, burst: 1)
        for _ in 0..<100 { _ = bucket.take(at: start + 0.5, rate: 1, burst: 1) }
        #expect(bucket.take(at: start + 1, rate: 1, burst: 1) == .allowed)
    }

    @Test func aRefundGivesOneTokenBackAndNeverFillsPastFull() {
        var bucket = TokenBucket()
        _ = bucket.take(at: start, rate: 1, burst: 2)
        _ = bucket.take(at: start, rate: 1, burst: 2)
        #expect(bucket.take(at: start, rate: 1, burst: 2) != .allowed)
        bucket.refund(at: start, rate: 1)
        #expect(bucket.take(at: start, rate: 1, burst: 2) == .allowed)
        #expect(bucket.take(at: start, rate: 1, burst: 2) != .allowed)
        var full = TokenBucket()
        full.refund(at: start, rate: 1)
        #expect(full.isFull(at: start))
        for _ in 0..<2 { #expect(full.take(at: start, rate: 1, burst: 2) == .allowed) }
        #expect(full.take(at: start, rate: 1, burst: 2) != .allowed)
    }

    @Test func aClockThatWentBackIsTreatedAsStandingStill() {
        var bucket = TokenBucket()
        _ = bucket.take(at: start, rate: 1, burst: 1)
        #expect(bucket.take(at: start - 100, rate: 1, burst: 1) != .allowed)
        #expect(bucket.take(at: start + 1, rate: 1, burst: 1) == .allowed)
    }
}
