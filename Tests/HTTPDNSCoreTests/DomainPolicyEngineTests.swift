import Testing

@testable import HTTPDNSCore

/// The engine refuses a name its account's `domains` refuses on every path: the lookup, a cached
/// entry, a background refresh; no upstream is asked.
@Suite struct DomainPolicyEngineTests {
    private static let denyingAds = AccountConfig.test {
        $0.domains = try! DomainPolicy(mode: .any, allow: [], deny: ["ads.example.com"])
    }

    @Test func aRefusedNameFailsAtOnceWithoutAskingTheUpstream() throws {
        let fixture = EngineFixture(config: Self.denyingAds)
        fixture.upstream.setAnswer("ads.example.com", addresses: ["192.0.2.1"], ttl: 300)
        let resolution = fixture.resolve("ads.example.com")
        #expect(resolution.failure == .notAllowed(HostName.valid("ads.example.com")))
        #expect(resolution.failure?.notAllowed == true)
        #expect(fixture.upstream.totalCalls == 0)
        let box = OutcomeBox()
        fixture.engine.resolveUncached(host: .valid("ads.example.com"), family: .a) { box.append($0) }
        #expect(box.values.count == 1)
        #expect(fixture.upstream.totalCalls == 0)
        #expect(fixture.engine.lookupOptions.hasDomainPolicy)
        #expect(!EngineFixture().engine.lookupOptions.hasDomainPolicy)
    }

    @Test func aNameCachedBeforeItWasDeniedIsRefusedAndNeverRefreshed() throws {
        var config = AccountConfig.test()
        config.schedulePrefetchEnable = true
        let fixture = EngineFixture(config: config)
        fixture.upstream.setAnswer("ads.example.com", addresses: ["192.0.2.1"], ttl: 100)
        _ = fixture.resolve("ads.example.com")
        #expect(fixture.resolve("ads.example.com").fromCache)
        #expect(fixture.upstream.totalCalls == 1)

        config.domains = try DomainPolicy(mode: .listed, allow: ["*.example.org"], deny: [])
        fixture.engine.update(config: config)
        #expect(fixture.resolve("ads.example.com").failure?.notAllowed == true)
        // Queued for a refresh (the whole cache, and the scheduled prefetch of an entry about to
        // expire), yet refused: the upstream is not asked again.
        fixture.clock.advance(by: 95)
        #expect(fixture.engine.refreshAll() == 1)
        _ = fixture.engine.runScheduledPrefetch()
        #expect(fixture.upstream.totalCalls == 1)
    }
}
