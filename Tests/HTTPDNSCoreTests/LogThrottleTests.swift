import HTTPDNSCore
import Testing

@Suite struct LogThrottleTests {
    @Test func oneMessagePerKeyAndIntervalWithTheCountHeldBack() {
        let throttle = LogThrottle(interval: 10)
        #expect(throttle.admit("a", now: 100) == 0)
        #expect(throttle.admit("a", now: 101) == nil)
        #expect(throttle.admit("a", now: 109.9) == nil)
        #expect(throttle.admit("b", now: 105) == 0)
        #expect(throttle.admit("a", now: 110) == 2)
        #expect(throttle.admit("a", now: 111) == nil)
    }
}
