import Testing

@testable import HTTPDNSRedis

@Suite struct RedisBackoffTests {
    @Test func delaysDoubleUpToTheMaximumAndStartOverAfterAReset() {
        var backoff = RedisBackoff(initial: 0.1, maximum: 1)
        #expect((0..<6).map { _ in backoff.nextDelay() } == [0.1, 0.2, 0.4, 0.8, 1, 1])
        backoff.reset()
        #expect(backoff.nextDelay() == 0.1)
    }
}
