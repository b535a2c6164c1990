import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// Failover order, the system-resolver fallback and the timeout classification, through the engine.
@Suite struct UpstreamChainTests {
    /// What a report says of a reply: the answer's kind and its address count (an answer with
    /// addresses counts as one whatever else it says), or the error.
    @Test func aReplyIsSummarisedByItsKindAndAddressCount() {
        let cname = HostName.valid("target.example")
        let error = UpstreamError(.serverFailure, "SERVFAIL")
        let cases: [(Result<UpstreamAnswer, UpstreamError>, ReplySummary, Bool)] = [
            (.success(UpstreamAnswer(addresses: ["192.0.2.1", "192.0.2.2"], ttl: 60)), .answered(.answer, addresses: 2), false),
            (.success(UpstreamAnswer(addresses: ["192.0.2.1"], ttl: 60, cnameTarget: cname)), .answered(.answer, addresses: 1), false),
            (.success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true)), .answered(.nxdomain, addresses: 0), true),
            (.success(UpstreamAnswer(addresses: [], ttl: nil)), .answered(.nodata, addresses: 0), true),
            (.success(UpstreamAnswer(addresses: [], ttl: nil, cnameTarget: cname)), .answered(.cname, addresses: 0), true),
            (.failure(error), .failed(error), false),
        ]
        for (result, summary, negative) in cases {
            #expect(ReplySummary(result) == summary)
            #expect(ReplySummary(result).isNegative == negative)
        }
    }

    @Test func transportFailureOnTheFirstUpstreamAsksTheSecond() throws {
        let fixture = EngineFixture(upstreamCount: 2)
        fixture.upstreams[0].setFailure("www.example.com", .a, .transport)
        fixture.upstreams[1].setAnswer("www.example.com", addresses: ["192.0.2.2"], ttl: 300)

        let answer = try #require(fixture.resolve("www.example.com").answer)
        #expect(answer.addresses == ["192.0.2.2"])
        #expect(answer.source == .upstream)
        #expect(fixture.upstreams[0].calls("www.example.com") == 1)
        #expect(fixture.upstreams[1].calls("www.example.com") == 1)
        #expect(fixture.fallback.totalCalls == 0)
    }

    @Test func secondUpstreamIsAskedOnlyAfterTheFirstFailed() {
        let fixture = EngineFixture(upstreamCount: 3)
        fixture.upstreams[0].setFailure("www.example.com", .a, .timeout)
        fixture.upstreams[1].setFailure("www.example.com", .a, .serverFailure)
        fixture.upstreams[2].setAnswer("www.example.com", addresses: ["192.0.2.3"], ttl: 300)
        for upstream in fixture.upstreams { upstream.holdReplies(true) }

        let resolution = fixture.resolve("www.example.com")
        #expect(fixture.upstreams.map(\.totalCalls) == [1, 0, 0])
        fixture.upstreams[0].release()
        #expect(fixture.upstreams.map(\.totalCalls) == [1, 1, 0])
        fixture.upstreams[1].release()
        #expect(fixture.upstreams.map(\.totalCalls) == [1, 1, 1])
        #expect(resolution.outcome == nil)
        fixture.upstreams[2].release()
        #expect(resolution.answer?.addresses == ["192.0.2.3"])
    }

    @Test func successOnTheFirstUpstreamNeverAsksTheSecond() {
        let fixture = EngineFixture(upstreamCount: 2)
        fixture.upstreams[0].setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        fixture.upstreams[1].setAnswer("www.example.com", addresses: ["192.0.2.2"], ttl: 300)
        #expect(fixture.resolve("www.example.com").answer?.addresses == ["192.0.2.1"])
        #expect(fixture.upstreams[1].totalCalls == 0)
    }

    @Test func nxdomainFromTheFirstUpstreamIsAnAnswerNotAFailure() {
        let fixture = EngineFixture(upstreamCount: 2)
        fixture.upstreams[0].setReply("missing.example", .a, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true)))
        fixture.upstreams[1].setAnswer("missing.example", addresses: ["192.0.2.2"], ttl: 300)
        #expect(fixture.resolve("missing.example").answer?.nxdomain == true)
        #expect(fixture.upstreams[1].totalCalls == 0)
        #expect(fixture.fallback.totalCalls == 0)
    }

    @Test func allUpstreamsFailingFallsBackToTheSystemResolver() throws {
        let fixture = EngineFixture(upstreamCount: 2)
        fixture.upstreams[0].setFailure("www.example.com", .a, .transport)
        fixture.upstreams[1].setFailure("www.example.com", .a, .httpStatus)
        fixture.fallback.setAnswer("www.example.com", addresses: ["192.0.2.53"], ttl: 3000)

        let answer = try #require(fixture.resolve("www.example.com").answer)
        #expect(answer == ResolvedAnswer(addresses: ["192.0.2.53"], ttl: 60, originTTL: 60, source: .localdns))
        #expect(fixture.fallback.calls("www.example.com") == 1)
        let entry = try #require(fixture.engine.cachedEntries().first?.1)
        #expect(entry.origin == .localdns)
        #expect(fixture.resolve("www.example.com").fromCache)
    }

    @Test func fallbackTTLIsCappedByMaxCacheTTL() {
        let fixture = EngineFixture(config: .test { $0.maxCacheTTL = 15 })
        fixture.upstream.setFailure("www.example.com", .a, .transport)
        fixture.fallback.setAnswer("www.example.com", addresses: ["192.0.2.53"], ttl: nil)
        #expect(fixture.resolve("www.example.com").answer?.originTTL == 15)
    }

    @Test func withoutFallbackAllUpstreamsFailingIsAFailure() throws {
        let fixture = EngineFixture(config: .test { $0.localDNSFallback = false }, upstreamCount: 2)
        fixture.upstreams[0].setFailure("www.example.com", .a, .transport, "connection refused")
        fixture.upstreams[1].setFailure("www.example.com", .a, .permission, "403")
        fixture.fallback.setAnswer("www.example.com", addresses: ["192.0.2.53"], ttl: nil)

        let failure = try #require(fixture.resolve("www.example.com").failure)
        #expect(!failure.timedOut)
        #expect(failure.message.contains("permission: 403"))
        #expect(fixture.fallback.totalCalls == 0)
        #expect(fixture.engine.metrics.resolveFailures.value == 1)
    }

    @Test func failingFallbackIsAFailureNamingBothErrors() throws {
        let fixture = EngineFixture()
        fixture.upstream.setFailure("www.example.com", .a, .transport, "refused")
        fixture.fallback.setFailure("www.example.com", .a, .serverFailure, "SERVFAIL")
        let failure = try #require(fixture.resolve("www.example.com").failure)
        #expect(!failure.timedOut)
        #expect(failure.message.contains("transport: refused"))
        #expect(failure.message.contains("serverFailure: SERVFAIL"))
    }

    @Test(arguments: [
        // (upstream codes, fallback code or nil when disabled, timedOut)
        ([UpstreamError.Code.timeout, .timeout], UpstreamError.Code?.some(.timeout), true),
        ([.timeout, .timeout], nil, true),
        ([.timeout], .some(.transport), false),
        ([.transport], .some(.timeout), false),
        ([.timeout, .transport], nil, false),
        ([.transport, .timeout], nil, false),
        ([.timeout, .timeout], .some(.serverFailure), false),
    ])
    func timedOutOnlyWhenEveryAttemptTimedOut(_ codes: [UpstreamError.Code], _ fallbackCode: UpstreamError.Code?, _ timedOut: Bool) throws {
        let fixture = EngineFixture(config: .test { $0.localDNSFallback = fallbackCode != nil }, upstreamCount: codes.count)
        for (upstream, code) in zip(fixture.upstreams, codes) { upstream.setFailure("www.example.com", .a, code) }
        if let fallbackCode { fixture.fallback.setFailure("www.example.com", .a, fallbackCode) }

        let failure = try #require(fixture.resolve("www.example.com").failure)
        #expect(failure.timedOut == timedOut)
    }

    @Test func chainWithoutUpstreamsOrFallbackFailsWithoutTimeout() {
        let chain = UpstreamChain(upstreams: [], fallback: nil)
        let box = OutcomeBox()
        chain.resolve(
            UpstreamQuery(host: .valid("www.example.com"), family: .a, timeoutMilliseconds: 1000), clock: ManualClock(),
            report: { _ in },
            completion: { outcome in
                if case .failed(let timedOut, let message) = outcome {
                    box.append(.failure(ResolveFailure(timedOut: timedOut, message: message)))
                }
            })
        #expect(box.values == [.failure(ResolveFailure(timedOut: false, message: "no upstream configured"))])
    }

    @Test func queryCarriesTheAccountTimeoutInMilliseconds() {
        let fixture = EngineFixture(config: .test { $0.timeout = 2.5 })
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        _ = fixture.resolve("WWW.example.com.")
        #expect(fixture.upstream.queries == [UpstreamQuery(host: .valid("www.example.com"), family: .a, timeoutMilliseconds: 2500)])
    }

    @Test func updatedConfigRebuildsTheChain() {
        let fixture = EngineFixture()
        fixture.upstream.setFailure("www.example.com", .a, .transport)
        fixture.fallback.setAnswer("www.example.com", addresses: ["192.0.2.53"], ttl: nil)
        fixture.engine.update(config: .test { $0.localDNSFallback = false })
        #expect(fixture.resolve("www.example.com").failure != nil)
        #expect(fixture.fallback.totalCalls == 0)
        #expect(fixture.engine.config.localDNSFallback == false)
    }
}
