import HTTPDNSTestSupport
import Synchronization
import Testing

@testable import HTTPDNSCore

/// `upstreamQPS`: a budget of upstream queries per second per account, taken where the engine
/// starts an upstream query; single-flight waiters cost nothing; over the budget a miss is
/// answered stale when it may be, else refused with a Retry-After.
@Suite struct UpstreamBudgetTests {
    private func fixture(qps: Double, _ change: (inout AccountConfig) -> Void = { _ in }) -> EngineFixture {
        let fixture = EngineFixture(
            config: .test {
                $0.localDNSFallback = false
                $0.upstreamQPS = qps
                change(&$0)
            })
        for index in 0..<20 { fixture.upstream.setAnswer("h\(index).example", .a, addresses: ["192.0.2.\(index)"], ttl: 30) }
        return fixture
    }

    @Test func missesBeyondTheBudgetAreRefusedWithRetryAfterAndAskNoUpstream() throws {
        let fixture = fixture(qps: 2)
        #expect(fixture.resolve("h0.example").answer != nil)
        #expect(fixture.resolve("h1.example").answer != nil)
        let refused = try #require(fixture.resolve("h2.example").failure)
        #expect(refused.retryAfter == 1)
        #expect(!refused.timedOut)
        #expect(fixture.upstream.totalCalls == 2)
        #expect(fixture.engine.metrics.upstreamBudgetRefusals.value == 1)
        // The budget comes back with time.
        fixture.clock.advance(by: 0.5)
        #expect(fixture.resolve("h2.example").answer != nil)
        #expect(fixture.upstream.totalCalls == 3)
    }

    /// A client's misses take from its share: one spending the budget leaves another's misses
    /// their part of it (`FairBudget` has the rule).
    @Test func aClientSpendingTheBudgetLeavesAnotherClientItsShare() {
        let fixture = fixture(qps: 10)
        let flooder = ClientID(key: 1), other = ClientID(key: 2)
        let names = (0..<200).map { "flood\($0).example" }
        for name in names { fixture.upstream.setAnswer(name, .a, addresses: ["192.0.2.200"], ttl: 30) }
        let flooded = names.prefix(40).filter { fixture.resolve($0, client: flooder).answer != nil }.count
        #expect(flooded == 5, "a client alone gets half the bucket at once")
        for index in 0..<4 { #expect(fixture.resolve("h\(index).example", client: other).answer != nil, "h\(index)") }
        #expect(fixture.engine.metrics.upstreamBudgetRefusals.value == 35)
    }

    @Test func hitsAndJoinedWaitersCostNothing() {
        let fixture = fixture(qps: 1)
        fixture.upstream.holdReplies(true)
        let first = fixture.resolve("h0.example")
        let joined = (0..<5).map { _ in fixture.resolve("h0.example") }
        fixture.upstream.releaseAll()
        #expect(first.answer != nil)
        #expect(joined.allSatisfy { $0.answer != nil })
        #expect(fixture.upstream.totalCalls == 1)
        for _ in 0..<10 { #expect(fixture.resolve("h0.example").fromCache) }
        #expect(fixture.engine.metrics.upstreamBudgetRefusals.value == 0)
    }

    @Test func anExpiredAnswerWithinMaxStaleAgeIsServedStaleOverBudget() throws {
        let fixture = fixture(qps: 1) { $0.maxStaleAge = 60 }
        #expect(fixture.resolve("h0.example").answer != nil)
        fixture.clock.advance(by: 31)  // expired 1 s ago; the budget has refilled
        _ = fixture.resolve("h1.example")  // spends it
        let stale = try #require(fixture.resolve("h0.example").answer)
        #expect(stale.stale)
        #expect(stale.addresses == ["192.0.2.0"])
        #expect(fixture.upstream.calls("h0.example") == 1)
        #expect(fixture.engine.metrics.upstreamBudgetRefusals.value == 1)
    }

    @Test func anAnswerExpiredBeyondMaxStaleAgeIsRefused() throws {
        let fixture = fixture(qps: 1) { $0.maxStaleAge = 5 }
        #expect(fixture.resolve("h0.example").answer != nil)
        fixture.clock.advance(by: 40)
        _ = fixture.resolve("h1.example")
        #expect(try #require(fixture.resolve("h0.example").failure).retryAfter == 1)
    }

    @Test func withoutABudgetNothingIsRefused() {
        let fixture = fixture(qps: 0)
        for index in 0..<20 { #expect(fixture.resolve("h\(index).example").answer != nil) }
        #expect(fixture.engine.metrics.upstreamBudgetRefusals.value == 0)
    }

    @Test func aConfigurationUpdateAppliesAtTheNextQuery() {
        let fixture = fixture(qps: 1)
        _ = fixture.resolve("h0.example")
        #expect(fixture.resolve("h1.example").failure != nil)
        var config = fixture.engine.config
        config.upstreamQPS = 0
        fixture.engine.update(config: config)
        #expect(fixture.resolve("h1.example").answer != nil)
    }

    /// Preload counts each host against the budget, and reports the refused ones per host.
    @Test func preloadReportsHostsOverTheBudgetOneByOne() throws {
        let fixture = fixture(qps: 3)
        let hosts = (0..<10).map { HostName("h\($0).example")! }
        let reports = Mutex<[PreloadOutcome]>([])
        Preloader.start(engine: fixture.engine, hosts: hosts, families: [.a], concurrency: 4) { outcomes in
            reports.withLock { $0 = outcomes }
        }
        let outcomes = reports.withLock { $0 }
        #expect(outcomes.count == 10)
        #expect(outcomes.filter(\.ok).count == 3)
        for outcome in outcomes where !outcome.ok {
            guard case .failure(let failure) = outcome.results[0].1 else { Issue.record("no failure"); continue }
            #expect(failure.retryAfter != nil, "\(outcome.host)")
        }
        #expect(fixture.upstream.totalCalls == 3)
    }
}
