@testable import HTTPDNSStore
import Testing

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
