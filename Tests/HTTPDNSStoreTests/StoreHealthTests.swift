import Testing

@testable import HTTPDNSStore

@Suite struct StoreHealthTests {
    private let full = StoreError(code: .full, message: "database or disk is full", sqliteResultCode: 13)

    @Test func theBackoffDoublesFromOneSecondAndStopsAtThirty() {
        var health = StoreHealth()
        var waits: [Double] = []
        for attempt in 0..<8 {
            let now = Double(attempt) * 100
            _ = health.cacheCommitFailed(full, monotonicNow: now, unixNow: 0)
            waits.append(health.retryAt! - now)
        }
        #expect(waits == [1, 2, 4, 8, 16, 30, 30, 30])
        #expect(health.isBackingOff(at: 700 + 29.9))
        #expect(!health.isBackingOff(at: 700 + 30))
    }

    /// Read at the moment of the failure, the Retry-After is the backoff itself, whatever the
    /// clock reads: (15.599191901401943 + 4) - 15.599191901401943 is 4.000000000000002 in
    /// doubles, which a difference rounded up would turn into 5.
    @Test func theRetryAfterReadAtTheFailureIsTheBackoffForAnyClockReading() {
        for now in [15.599191901401943, 0.3, 22.584, 1_234.567] {
            var health = StoreHealth()
            var seconds: [Int] = []
            for _ in 0..<6 {
                _ = health.accountWriteFailed(full, monotonicNow: now, unixNow: 0)
                seconds.append(health.retryAfterSeconds(at: now))
            }
            #expect(seconds == [1, 2, 4, 8, 16, 30], "clock at \(now)")
        }
        var health = StoreHealth()
        _ = health.accountWriteFailed(full, monotonicNow: 10, unixNow: 0)
        #expect(health.retryAfterSeconds(at: 10.5) == 1)
        #expect(health.retryAfterSeconds(at: 11) == 1)  // over: try now
    }

    @Test func onlyAChangeOfStateIsATransition() {
        var health = StoreHealth()
        #expect(health.cacheCommitFailed(full, monotonicNow: 0, unixNow: 5) == .becameUnhealthy(reason: "full (SQLite result code 13)"))
        #expect(health.cacheCommitFailed(full, monotonicNow: 1, unixNow: 6) == .none)
        #expect(health.accountWriteSucceeded() == .none)  // the cache batch is still not committed
        #expect(!health.isHealthy)
        #expect(health.failingSince == 5)
        #expect(health.cacheCommitSucceeded() == .recovered(afterFailures: 2))
        #expect(health.isHealthy && health.retryAt == nil && health.failingSince == nil)
        #expect(health.cacheCommitSucceeded() == .none)
    }

    @Test func aFailedAccountWriteIsClearedByACommittedCacheBatch() {
        var health = StoreHealth()
        _ = health.accountWriteFailed(full, monotonicNow: 0, unixNow: 0)
        #expect(!health.isHealthy)
        #expect(health.cacheCommitSucceeded() == .recovered(afterFailures: 1))
    }
}
