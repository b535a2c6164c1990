import Testing

@testable import HTTPDNSRedis

/// When a Redis connection's loop thread wakes by itself: at its deadlines only. An idle, ready
/// connection (every replica's `answers` and `accounts` between requests) has none and sleeps
/// until a socket or the wake-up pipe; the subscriber wakes for its health check only.
struct RedisLoopScheduleTests {
    static let timeout: UInt64 = 50_000_000
    static let deadAfter: UInt64 = 1_000_000_000

    /// The loop's `epoll_wait` timeout at `now` (nanoseconds; 10 s unless given).
    static func wait(
        _ phase: RedisLoopWorker.Phase, now: UInt64 = 10_000_000_000, queuedAt: UInt64? = nil, silentSince: UInt64? = nil,
        healthCheckAt: UInt64? = nil
    ) -> Int32 {
        RedisLoopWorker.waitMilliseconds(
            now: now, phase: phase, oldestQueuedAt: queuedAt, timeout: timeout, silentSince: silentSince, deadAfter: deadAfter,
            healthCheckAt: healthCheckAt)
    }

    @Test func aReadyConnectionWithNothingQueuedSleepsWithoutATimer() {
        #expect(Self.wait(.ready) == -1)
    }

    @Test func itWakesAtTheEarliestDeadline() {
        // A command queued at 10 s times out at 10.05 s, before its connection is deemed dead.
        #expect(Self.wait(.ready, queuedAt: 10_000_000_000, silentSince: 10_000_000_000) == 50)
        // Answered commands gone, one still unanswered since 9.5 s: deemed dead at 10.5 s.
        #expect(Self.wait(.ready, silentSince: 9_500_000_000) == 500)
        // Down: the reconnection, unless a command's timeout comes first.
        #expect(Self.wait(.down(retryAt: 15_000_000_000)) == 5000)
        #expect(Self.wait(.down(retryAt: 15_000_000_000), queuedAt: 10_000_000_000) == 50)
        // Connecting: the handshake's end.
        #expect(Self.wait(.connecting(deadline: 10_200_000_000), queuedAt: 10_190_000_000) == 200)
        // A ready subscriber: its next health check.
        #expect(Self.wait(.ready, healthCheckAt: 10_700_000_000) == 700)
    }

    @Test func theWaitIsRoundedUpToWholeMillisecondsAndIsZeroOncePassed() {
        let now: UInt64 = 7_000_000_000
        #expect(Self.wait(.down(retryAt: now + 1), now: now) == 1)
        #expect(Self.wait(.down(retryAt: now + 1_000_000), now: now) == 1)
        #expect(Self.wait(.down(retryAt: now + 1_000_001), now: now) == 2)
        #expect(Self.wait(.down(retryAt: now), now: now) == 0)
        #expect(Self.wait(.down(retryAt: now - 1), now: now) == 0)
        #expect(Self.wait(.down(retryAt: UInt64.max), now: 0) == Int32.max)
    }
}
