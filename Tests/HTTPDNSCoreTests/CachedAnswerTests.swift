import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// `cachedAnswer`: the cache-only lookup behind `GET /cache?host=...&expired=1`.
@Suite struct CachedAnswerTests {
    private func primed(ttl: UInt32 = 100) -> EngineFixture {
        let fixture = EngineFixture()
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: ttl)
        _ = fixture.resolve("www.example.com")
        return fixture
    }

    private func lookup(_ fixture: EngineFixture, allowExpired: Bool) -> ResolvedAnswer? {
        fixture.engine.cachedAnswer(host: .valid("www.example.com"), family: .a, allowExpired: allowExpired)
    }

    @Test func absentEntryIsNilAndNeverAsksTheUpstream() {
        let fixture = EngineFixture()
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 100)
        #expect(lookup(fixture, allowExpired: true) == nil)
        #expect(lookup(fixture, allowExpired: false) == nil)
        #expect(fixture.upstream.totalCalls == 0)
    }

    @Test func freshEntryIsReturnedWithItsRemainingTTL() {
        let fixture = primed()
        fixture.clock.advance(by: 40)
        for allowExpired in [false, true] {
            #expect(
                lookup(fixture, allowExpired: allowExpired)
                    == ResolvedAnswer(addresses: ["192.0.2.1"], ttl: 60, originTTL: 100, source: .cache))
        }
        #expect(fixture.upstream.totalCalls == 1)
    }

    @Test func expiredEntryIsNilWithoutAllowExpired() {
        let fixture = primed()
        fixture.clock.advance(by: 100)
        #expect(lookup(fixture, allowExpired: false) == nil)
        #expect(fixture.upstream.totalCalls == 1)
    }

    @Test func expiredEntryIsServedStaleAndRefreshedOnceInTheBackground() {
        let fixture = primed()
        fixture.clock.advance(by: 150)
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.2"], ttl: 100)
        fixture.upstream.holdReplies(true)

        let stale = ResolvedAnswer(addresses: ["192.0.2.1"], ttl: 0, originTTL: 100, source: .stale, stale: true)
        #expect(lookup(fixture, allowExpired: true) == stale)
        #expect(lookup(fixture, allowExpired: true) == stale)
        #expect(fixture.upstream.calls("www.example.com") == 2)
        #expect(fixture.upstream.heldCount == 1)

        fixture.upstream.release()
        #expect(lookup(fixture, allowExpired: false) == ResolvedAnswer(addresses: ["192.0.2.2"], ttl: 100, originTTL: 100, source: .cache))
        #expect(fixture.upstream.calls("www.example.com") == 2)
    }

    @Test func backgroundRefreshJoinsAResolutionAlreadyInFlight() {
        let fixture = primed()
        fixture.clock.advance(by: 150)
        fixture.upstream.holdReplies(true)
        let waiting = fixture.resolve("www.example.com")
        #expect(lookup(fixture, allowExpired: true)?.stale == true)
        #expect(fixture.upstream.calls("www.example.com") == 2)
        fixture.upstream.release()
        #expect(waiting.answer?.addresses == ["192.0.2.1"])
    }
}
