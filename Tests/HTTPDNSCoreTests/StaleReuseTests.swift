import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// `reuseExpiredIPEnabled` (seed 001): an expired entry is answered at once, marked stale, and
/// refreshed once in the background; bounded by `maxStaleAge` and `staleExcludeHosts`.
@Suite struct StaleReuseTests {
    private func fixture(_ change: (inout AccountConfig) -> Void = { _ in }) -> EngineFixture {
        let fixture = EngineFixture(
            config: .test {
                $0.reuseExpiredIPEnabled = true
                $0.localDNSFallback = false
                change(&$0)
            })
        fixture.upstream.setAnswer("shop.example", addresses: ["192.0.2.1"], ttl: 30)
        _ = fixture.resolve("shop.example")
        fixture.upstream.setAnswer("shop.example", addresses: ["192.0.2.2"], ttl: 30)
        return fixture
    }

    @Test func expiredEntryIsServedStaleOnceThenTheRefreshedOne() throws {
        let fixture = fixture()
        fixture.upstream.holdReplies(true)
        fixture.clock.advance(by: 31)

        let stale = fixture.resolve("shop.example")
        #expect(stale.fromCache)
        #expect(stale.answer == ResolvedAnswer(addresses: ["192.0.2.1"], ttl: 0, originTTL: 30, source: .stale, stale: true))
        #expect(fixture.upstream.calls("shop.example") == 2)

        // While the refresh is in flight, more stale answers start no second refresh.
        #expect(fixture.resolve("shop.example").answer?.stale == true)
        #expect(fixture.upstream.calls("shop.example") == 2)

        #expect(fixture.upstream.release() == 1)
        let fresh = fixture.resolve("shop.example")
        #expect(fresh.fromCache)
        #expect(fresh.answer?.addresses == ["192.0.2.2"])
        #expect(fresh.answer?.stale == false)
        #expect(fixture.engine.metrics.staleServed.value == 2)
        #expect(fixture.engine.stats.record(StatsKey(domain: "shop.example", family: .a, network: "default"))?.staleNum == 2)
    }

    @Test func withoutTheOptionAnExpiredEntryWaitsForTheUpstream() {
        let fixture = fixture { $0.reuseExpiredIPEnabled = false }
        fixture.clock.advance(by: 31)
        let answer = fixture.resolve("shop.example")
        #expect(!answer.fromCache)
        #expect(answer.answer?.addresses == ["192.0.2.2"])
        #expect(fixture.engine.metrics.staleServed.value == 0)
    }

    @Test func anEntryOlderThanMaxStaleAgeIsNotReused() {
        let fixture = fixture { $0.maxStaleAge = 60 }
        fixture.clock.advance(by: 30 + 60)
        #expect(fixture.resolve("shop.example").answer?.stale == true)

        let beyond = fixture.fixtureWithFreshExpiry(expiredFor: 61)
        #expect(!beyond.resolve("shop.example").fromCache)
        #expect(beyond.resolve("shop.example").answer?.addresses == ["192.0.2.2"])
    }

    @Test func excludedHostsAndTheirSubdomainsAreNeverServedStale() throws {
        let fixture = EngineFixture(
            config: .test {
                $0.reuseExpiredIPEnabled = true
                $0.staleExcludeHosts = [.valid("bank.example")]
            })
        for host in ["bank.example", "login.bank.example", "notbank.example"] {
            fixture.upstream.setAnswer(host, addresses: ["192.0.2.1"], ttl: 30)
            _ = fixture.resolve(host)
        }
        fixture.clock.advance(by: 31)
        #expect(!fixture.resolve("bank.example").fromCache)
        #expect(!fixture.resolve("login.bank.example").fromCache)
        #expect(fixture.resolve("notbank.example").answer?.stale == true)
    }

    @Test func excludedHostsGetTheFailureRatherThanAStaleAnswer() {
        let fixture = EngineFixture(
            config: .test {
                $0.localDNSFallback = false
                $0.staleExcludeHosts = [.valid("bank.example")]
            })
        fixture.upstream.setAnswer("bank.example", addresses: ["192.0.2.1"], ttl: 30)
        _ = fixture.resolve("bank.example")
        fixture.clock.advance(by: 31)
        fixture.upstream.setFailure("bank.example", .a, .timeout)
        #expect(fixture.resolve("bank.example").failure?.timedOut == true)
    }
}

extension EngineFixture {
    /// A reuse-enabled fixture whose "shop.example" entry (ttl 30) expired `seconds` ago and whose
    /// upstream now answers 192.0.2.2.
    fileprivate func fixtureWithFreshExpiry(expiredFor seconds: Double) -> EngineFixture {
        let fixture = EngineFixture(
            config: .test {
                $0.reuseExpiredIPEnabled = true
                $0.maxStaleAge = 60
            })
        fixture.upstream.setAnswer("shop.example", addresses: ["192.0.2.1"], ttl: 30)
        _ = fixture.resolve("shop.example")
        fixture.upstream.setAnswer("shop.example", addresses: ["192.0.2.2"], ttl: 30)
        fixture.clock.advance(by: 30 + seconds)
        return fixture
    }
}
