import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// A reply that ends in a CNAME without addresses is followed to its target, as a recursive
/// resolver would; a chain that ends nowhere is a marked negative answer, negative-cached.
@Suite struct CNAMEFollowingTests {
    private func dangling(_ fixture: EngineFixture, _ owner: String, to target: String, ttl: UInt32) {
        fixture.upstream.setReply(owner, .a, .success(UpstreamAnswer(addresses: [], ttl: ttl, cnameTarget: HostName(target)!)))
    }

    @Test func aDanglingCNAMEIsResolvedAndCachedWithTheChainsMinimumTTL() throws {
        let fixture = EngineFixture()
        dangling(fixture, "api.example.test", to: "mid.example.test", ttl: 60)
        dangling(fixture, "mid.example.test", to: "www.example.test", ttl: 120)
        fixture.upstream.setAnswer("www.example.test", addresses: ["192.0.2.11"], ttl: 300)
        let answer = try #require(fixture.resolve("api.example.test").answer)
        #expect(answer.addresses == ["192.0.2.11"])
        #expect(answer.originTTL == 60)
        #expect(!answer.nxdomain)
        #expect(fixture.upstream.calls("mid.example.test") == 1)
        #expect(fixture.upstream.calls("www.example.test") == 1)
        // Cached under the asked name.
        #expect(fixture.resolve("api.example.test").fromCache)
        #expect(fixture.upstream.calls("www.example.test") == 1)
    }

    @Test func aTargetThatDoesNotExistIsNXDOMAINCappedByTheChain() throws {
        let fixture = EngineFixture(config: .test { $0.maxNegativeCache = 600 })
        dangling(fixture, "api.example.test", to: "gone.example.test", ttl: 20)
        fixture.upstream.setReply(
            "gone.example.test", .a, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true, negativeTTL: 45)))
        let answer = try #require(fixture.resolve("api.example.test").answer)
        #expect(answer.nxdomain)
        #expect(answer.originTTL == 20)
        #expect(fixture.resolve("api.example.test").fromCache)
    }

    @Test func aLoopEndsAsANegativeCachedNoDataAnswer() throws {
        let fixture = EngineFixture(config: .test { $0.maxNegativeCache = 30 })
        dangling(fixture, "loop1.example.test", to: "loop2.example.test", ttl: 60)
        dangling(fixture, "loop2.example.test", to: "loop1.example.test", ttl: 60)
        let answer = try #require(fixture.resolve("loop1.example.test").answer)
        #expect(answer.addresses.isEmpty && !answer.nxdomain)
        #expect(answer.originTTL == 30)
        #expect(fixture.upstream.calls("loop1.example.test") == 1)
        #expect(fixture.upstream.calls("loop2.example.test") == 1)
        #expect(fixture.resolve("loop1.example.test").fromCache)
    }

    @Test func aChainLongerThanTheBoundIsCutAfterItsLastAllowedLink() throws {
        let fixture = EngineFixture()
        let names = (0...(CNAMEFollower.maximumLinks + 3)).map { "d\($0).example.test" }
        for index in 0..<(names.count - 1) { dangling(fixture, names[index], to: names[index + 1], ttl: 60) }
        fixture.upstream.setAnswer(names.last!, addresses: ["192.0.2.99"], ttl: 60)
        let answer = try #require(fixture.resolve(names[0]).answer)
        #expect(answer.addresses.isEmpty && !answer.nxdomain)
        #expect(fixture.upstream.totalCalls == CNAMEFollower.maximumLinks + 1)
        #expect(fixture.upstream.calls(names.last!) == 0)
    }

    @Test func aChainWithinTheBoundIsFollowedToTheEnd() throws {
        let fixture = EngineFixture()
        let names = (0...CNAMEFollower.maximumLinks).map { "e\($0).example.test" }
        for index in 0..<(names.count - 1) { dangling(fixture, names[index], to: names[index + 1], ttl: 60) }
        fixture.upstream.setAnswer(names.last!, addresses: ["192.0.2.98"], ttl: 60)
        #expect(fixture.resolve(names[0]).answer?.addresses == ["192.0.2.98"])
    }
}
