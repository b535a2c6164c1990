import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// TTL, caps, negative caching and LRU behaviour of the engine's cache, driven through `resolve`.
@Suite struct ResolverEngineCacheTests {
    @Test func firstRequestIsAnsweredByTheUpstream() throws {
        let fixture = EngineFixture()
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)

        let first = fixture.resolve("www.example.com")
        #expect(!first.fromCache)
        let answer = try #require(first.answer)
        #expect(answer == ResolvedAnswer(addresses: ["192.0.2.1"], ttl: 300, originTTL: 300, source: .upstream))
        #expect(fixture.upstream.calls("www.example.com") == 1)
    }

    @Test func hitBeforeExpiryIsServedFromCacheWithDecreasingTTL() throws {
        let fixture = EngineFixture()
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1", "192.0.2.2"], ttl: 300)
        _ = fixture.resolve("www.example.com")

        fixture.clock.advance(by: 100)
        let second = fixture.resolve("www.example.com")
        #expect(second.fromCache)
        #expect(second.answer == ResolvedAnswer(addresses: ["192.0.2.1", "192.0.2.2"], ttl: 200, originTTL: 300, source: .cache))

        fixture.clock.advance(by: 199.5)
        let third = fixture.resolve("www.example.com")
        #expect(third.fromCache)
        #expect(third.answer?.ttl == 1)
        #expect(fixture.upstream.calls("www.example.com") == 1)
    }

    @Test func requestAtExpiryMissesAndAsksTheUpstreamAgain() throws {
        let fixture = EngineFixture()
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        _ = fixture.resolve("www.example.com")

        fixture.clock.advance(by: 300)
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.9"], ttl: 300)
        let again = fixture.resolve("www.example.com")
        #expect(!again.fromCache)
        #expect(again.answer == ResolvedAnswer(addresses: ["192.0.2.9"], ttl: 300, originTTL: 300, source: .upstream))
        #expect(fixture.upstream.calls("www.example.com") == 2)

        // The refreshed answer is cached again.
        #expect(fixture.resolve("www.example.com").answer?.addresses == ["192.0.2.9"])
        #expect(fixture.upstream.calls("www.example.com") == 2)
    }

    @Test func aMissWhoseLookupRanBeforeAFlightStoredItsAnswerTakesThatAnswer() throws {
        let fixture = EngineFixture()
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        _ = fixture.resolve("www.example.com")

        // A request whose cache lookup missed just before that flight stored its answer and
        // ended reaches the upstream half only now.
        let box = OutcomeBox()
        fixture.engine.resolveUncached(host: HostName("www.example.com")!, family: .a) { box.append($0) }
        guard case .success(let answer) = try #require(box.values.first) else {
            Issue.record("expected an answer, got \(box.values)")
            return
        }
        #expect(answer == ResolvedAnswer(addresses: ["192.0.2.1"], ttl: 300, originTTL: 300, source: .cache))
        #expect(fixture.upstream.calls("www.example.com") == 1)
    }

    @Test func familiesAndNetworksAreCachedSeparately() {
        let fixture = EngineFixture(config: .test { $0.ispEnable = true })
        fixture.upstream.setAnswer("www.example.com", .a, addresses: ["192.0.2.1"], ttl: 300)
        fixture.upstream.setAnswer("www.example.com", .aaaa, addresses: ["2001:db8::1"], ttl: 300)

        #expect(fixture.resolve("www.example.com", .a).answer?.addresses == ["192.0.2.1"])
        #expect(fixture.resolve("www.example.com", .aaaa).answer?.addresses == ["2001:db8::1"])
        #expect(!fixture.resolve("www.example.com", .a, network: "198.51.100.0/24").fromCache)
        #expect(fixture.resolve("www.example.com", .a).fromCache)
        #expect(fixture.upstream.calls("www.example.com", .a) == 2)
        #expect(fixture.upstream.calls("www.example.com", .aaaa) == 1)
    }

    @Test func maxCacheTTLCapsPositiveTTL() {
        let fixture = EngineFixture(config: .test { $0.maxCacheTTL = 120 })
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 3600)

        let first = fixture.resolve("www.example.com")
        #expect(first.answer?.originTTL == 120)
        #expect(first.answer?.ttl == 120)

        fixture.clock.advance(by: 119)
        #expect(fixture.resolve("www.example.com").fromCache)
        fixture.clock.advance(by: 1)
        #expect(!fixture.resolve("www.example.com").fromCache)
        #expect(fixture.upstream.calls("www.example.com") == 2)
    }

    @Test func answerWithoutTTLGetsTheDefaultOf60Seconds() {
        let fixture = EngineFixture()
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: nil)
        #expect(fixture.resolve("www.example.com").answer?.originTTL == 60)

        let capped = EngineFixture(config: .test { $0.maxCacheTTL = 10 })
        capped.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: nil)
        #expect(capped.resolve("www.example.com").answer?.originTTL == 10)
    }

    @Test func nxdomainIsNegativeCached() throws {
        let fixture = EngineFixture()
        fixture.upstream.setReply(
            "missing.example.com", .a, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true, negativeTTL: 20)))

        let first = try #require(fixture.resolve("missing.example.com").answer)
        #expect(first == ResolvedAnswer(addresses: [], ttl: 20, originTTL: 20, source: .upstream, nxdomain: true))

        fixture.clock.advance(by: 5)
        let second = fixture.resolve("missing.example.com")
        #expect(second.fromCache)
        #expect(second.answer == ResolvedAnswer(addresses: [], ttl: 15, originTTL: 20, source: .cache, nxdomain: true))
        #expect(fixture.upstream.calls("missing.example.com") == 1)
        #expect(fixture.engine.metrics.negativeHits.value == 1)
    }

    @Test func maxNegativeCacheCapsTheNegativeTTL() {
        let fixture = EngineFixture(config: .test { $0.maxNegativeCache = 30 })
        fixture.upstream.setReply(
            "missing.example.com", .a, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true, negativeTTL: 900)))

        #expect(fixture.resolve("missing.example.com").answer?.originTTL == 30)
        fixture.clock.advance(by: 29)
        #expect(fixture.resolve("missing.example.com").fromCache)
        fixture.clock.advance(by: 1)
        #expect(!fixture.resolve("missing.example.com").fromCache)
        #expect(fixture.upstream.calls("missing.example.com") == 2)
    }

    @Test func nxdomainWithoutSOAIsCachedForMaxNegativeCache() {
        let fixture = EngineFixture(config: .test { $0.maxNegativeCache = 45 })
        fixture.upstream.setReply("missing.example.com", .a, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true)))
        #expect(fixture.resolve("missing.example.com").answer?.originTTL == 45)
        #expect(fixture.resolve("missing.example.com").fromCache)
    }

    @Test func nodataWithSOAIsNegativeCachedWithoutNXDOMAIN() throws {
        let fixture = EngineFixture()
        fixture.upstream.setReply(
            "v4only.example.com", .aaaa, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: false, negativeTTL: 25)))

        let first = try #require(fixture.resolve("v4only.example.com", .aaaa).answer)
        #expect(first.addresses.isEmpty)
        #expect(!first.nxdomain)
        #expect(first.originTTL == 25)

        let second = fixture.resolve("v4only.example.com", .aaaa)
        #expect(second.fromCache)
        #expect(second.answer?.addresses == [])
        #expect(second.answer?.nxdomain == false)
        #expect(fixture.upstream.calls("v4only.example.com", .aaaa) == 1)
    }

    /// The zone's SOA of a negative answer comes with it from the upstream and from the cache
    /// (RFC 2308 §3: for the client to negative-cache it), for NXDOMAIN and NODATA alike; the
    /// TTL it is sent with is the answer's, counting down. A positive answer keeps none even if
    /// the upstream named one.
    @Test func aNegativeAnswerKeepsItsSOAFromUpstreamToCacheHit() throws {
        let soa = try #require(
            NegativeAnswerSOA(
                zone: "example.com.", primary: "ns.example.com.", mailbox: "hostmaster.example.com.", serial: 3, refresh: 3600, retry: 600,
                expire: 86400, minimum: 20))
        let fixture = EngineFixture()
        fixture.upstream.setReply(
            "missing.example.com", .a, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true, negativeTTL: 20, soa: soa)))
        fixture.upstream.setReply(
            "v4only.example.com", .aaaa, .success(UpstreamAnswer(addresses: [], ttl: nil, negativeTTL: 20, soa: soa)))
        fixture.upstream.setReply(
            "www.example.com", .a, .success(UpstreamAnswer(addresses: ["192.0.2.1"], ttl: 60, soa: soa)))

        #expect(
            fixture.resolve("missing.example.com").answer
                == ResolvedAnswer(addresses: [], ttl: 20, originTTL: 20, source: .upstream, nxdomain: true, soa: soa))
        #expect(
            fixture.resolve("v4only.example.com", .aaaa).answer
                == ResolvedAnswer(addresses: [], ttl: 20, originTTL: 20, source: .upstream, soa: soa))
        #expect(fixture.resolve("www.example.com").answer?.soa == nil)
        fixture.clock.advance(by: 5)
        let hit = fixture.resolve("missing.example.com")
        #expect(hit.fromCache)
        #expect(hit.answer == ResolvedAnswer(addresses: [], ttl: 15, originTTL: 20, source: .cache, nxdomain: true, soa: soa))
        #expect(fixture.resolve("v4only.example.com", .aaaa).answer?.soa == soa)
        #expect(fixture.resolve("www.example.com").answer?.soa == nil)
    }

    @Test func nodataWithoutTTLInformationIsNotCached() {
        let fixture = EngineFixture()
        fixture.upstream.setReply("v4only.example.com", .aaaa, .success(UpstreamAnswer(addresses: [], ttl: nil)))

        #expect(fixture.resolve("v4only.example.com", .aaaa).answer?.addresses == [])
        #expect(!fixture.resolve("v4only.example.com", .aaaa).fromCache)
        #expect(fixture.upstream.calls("v4only.example.com", .aaaa) == 2)
        #expect(fixture.engine.cacheCount == 0)
    }

    /// An answer that is not cached (TTL 0) is still a fresh upstream answer, not a stale one.
    @Test func uncachedUpstreamAnswerIsNotReportedStale() throws {
        let fixture = EngineFixture()
        fixture.upstream.setReply("v4only.example.com", .aaaa, .success(UpstreamAnswer(addresses: [], ttl: nil)))
        fixture.upstream.setAnswer("zero.example.com", addresses: ["192.0.2.1"], ttl: 0)

        let nodata = try #require(fixture.resolve("v4only.example.com", .aaaa).answer)
        let zero = try #require(fixture.resolve("zero.example.com").answer)
        #expect(nodata.source == .upstream)
        #expect(!nodata.stale)
        #expect(zero.source == .upstream)
        #expect(!zero.stale)
        #expect(zero.ttl == 0)
    }

    @Test func cacheDisabledAsksTheUpstreamForEveryRequest() {
        let fixture = EngineFixture(config: .test { $0.cacheEnable = false })
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)

        for _ in 0..<3 {
            let resolution = fixture.resolve("www.example.com")
            #expect(!resolution.fromCache)
            #expect(resolution.answer?.source == .upstream)
        }
        #expect(fixture.upstream.calls("www.example.com") == 3)
        #expect(fixture.engine.cacheCount == 0)
        #expect(fixture.engine.metrics.cacheHits.value == 0)
    }

    @Test func leastRecentlyUsedEntryIsEvictedAtTheLimit() {
        let fixture = EngineFixture(config: .test { $0.cacheCountLimit = 3 })
        for host in ["a.example", "b.example", "c.example", "d.example"] {
            fixture.upstream.setAnswer(host, addresses: ["192.0.2.1"], ttl: 300)
        }
        _ = fixture.resolve("a.example")
        _ = fixture.resolve("b.example")
        _ = fixture.resolve("c.example")
        // Using a makes b the least recently used.
        #expect(fixture.resolve("a.example").fromCache)
        _ = fixture.resolve("d.example")

        #expect(fixture.engine.cacheCount == 3)
        let cached = Set(fixture.engine.cachedEntries().map(\.0.host.value))
        #expect(cached == ["a.example", "c.example", "d.example"])
        #expect(!fixture.resolve("b.example").fromCache)
        #expect(fixture.upstream.calls("b.example") == 2)
        #expect(fixture.upstream.calls("a.example") == 1)
    }

    @Test func negativeAnswersCountTowardsTheLimitToo() {
        let fixture = EngineFixture(config: .test { $0.cacheCountLimit = 1 })
        fixture.upstream.setAnswer("a.example", addresses: ["192.0.2.1"], ttl: 300)
        fixture.upstream.setReply("missing.example", .a, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true)))
        _ = fixture.resolve("a.example")
        _ = fixture.resolve("missing.example")
        #expect(fixture.engine.cachedEntries().map(\.0.host.value) == ["missing.example"])
    }

    @Test func failuresAreNotCached() {
        let fixture = EngineFixture(config: .test { $0.localDNSFallback = false })
        fixture.upstream.setFailure("down.example", .a, .transport)
        #expect(fixture.resolve("down.example").failure != nil)
        #expect(fixture.resolve("down.example").failure != nil)
        #expect(fixture.upstream.calls("down.example") == 2)
        #expect(fixture.engine.cacheCount == 0)
    }
}
