import HTTPDNSTestSupport
import Synchronization
import Testing

@testable import HTTPDNSCore

@Suite struct PreloaderTests {
    /// Collects the preload completion(s).
    final class Reports: Sendable {
        private let storage = Mutex<[[PreloadOutcome]]>([])
        func append(_ outcomes: [PreloadOutcome]) { storage.withLock { $0.append(outcomes) } }
        var all: [[PreloadOutcome]] { storage.withLock { $0 } }
    }

    private func hosts(_ count: Int) -> [String] { (0..<count).map { "h\($0).example" } }

    private func fixture(hosts: [String], config: AccountConfig = .test()) -> EngineFixture {
        let fixture = EngineFixture(config: config)
        for (index, host) in hosts.enumerated() {
            fixture.upstream.setAnswer(host, .a, addresses: ["192.0.2.\(index)"], ttl: 300)
            fixture.upstream.setAnswer(host, .aaaa, addresses: ["2001:db8::\(index)"], ttl: 300)
        }
        return fixture
    }

    private func start(_ fixture: EngineFixture, _ hosts: [String], families: [RecordFamily] = [.a, .aaaa], concurrency: Int) -> Reports {
        let reports = Reports()
        Preloader.start(engine: fixture.engine, hosts: hosts.map { HostName.valid($0) }, families: families, concurrency: concurrency) {
            reports.append($0)
        }
        return reports
    }

    @Test func neverMoreThanConcurrencyResolutionsAreInFlight() {
        let names = hosts(10)
        let fixture = fixture(hosts: names)
        fixture.upstream.holdReplies(true)

        let reports = start(fixture, names, concurrency: 3)
        #expect(fixture.upstream.heldCount == 3)
        var released = 0
        while fixture.upstream.releaseOne() {
            released += 1
            #expect(fixture.upstream.inFlight <= 3)
        }
        #expect(released == 20)
        #expect(fixture.upstream.peakInFlight == 3)
        #expect(fixture.upstream.totalCalls == 20)
        #expect(reports.all.count == 1)
    }

    @Test func everyHostIsReportedInTheOrderGiven() throws {
        let names = hosts(7)
        let fixture = fixture(hosts: names)
        fixture.upstream.holdReplies(true)
        let reports = start(fixture, names, concurrency: 2)
        // Release newest first so that completion order differs from the request order.
        while fixture.upstream.heldCount > 0 {
            while fixture.upstream.heldCount > 1 { _ = fixture.upstream.releaseOne() }
            _ = fixture.upstream.release()
        }
        let outcomes = try #require(reports.all.first)
        #expect(reports.all.count == 1)
        #expect(outcomes.map(\.host.value) == names)
        for (index, outcome) in outcomes.enumerated() {
            #expect(outcome.ok)
            #expect(outcome.results.map(\.0) == [.a, .aaaa])
            let addresses = outcome.results.map { try? $0.1.get().addresses }
            #expect(addresses == [["192.0.2.\(index)"], ["2001:db8::\(index)"]])
        }
    }

    @Test func hostWithAFailedFamilyIsNotOK() throws {
        let names = ["good.example", "half.example", "missing.example"]
        let fixture = fixture(hosts: names, config: .test { $0.localDNSFallback = false })
        fixture.upstream.setFailure("half.example", .aaaa, .timeout)
        fixture.upstream.setReply("missing.example", .a, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true)))
        fixture.upstream.setReply("missing.example", .aaaa, .success(UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true)))

        let reports = start(fixture, names, concurrency: 4)
        let outcomes = try #require(reports.all.first)
        #expect(outcomes.map(\.ok) == [true, false, true])
        if case .failure(let failure) = outcomes[1].results[1].1 {
            #expect(failure.timedOut)
        } else {
            Issue.record("half.example AAAA should have failed")
        }
    }

    @Test func synchronousAnswersCompleteBeforeStartReturns() throws {
        let names = hosts(50)
        let fixture = fixture(hosts: names)
        let reports = start(fixture, names, families: [.a], concurrency: 8)
        let outcomes = try #require(reports.all.first)
        #expect(reports.all.count == 1)
        #expect(outcomes.count == 50)
        #expect(outcomes.allSatisfy { $0.ok })
        #expect(fixture.upstream.totalCalls == 50)
    }

    @Test func cachedHostsAreAnsweredFromTheCache() throws {
        let names = hosts(3)
        let fixture = fixture(hosts: names)
        for name in names { _ = fixture.resolve(name, .a) }
        let reports = start(fixture, names, families: [.a], concurrency: 2)
        let outcomes = try #require(reports.all.first)
        let sources = outcomes.map { try? $0.results[0].1.get().source }
        #expect(sources == [.cache, .cache, .cache])
        #expect(fixture.upstream.totalCalls == 3)
    }

    @Test func emptyListCompletesAtOnce() {
        let fixture = fixture(hosts: [])
        let reports = start(fixture, [], concurrency: 4)
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.isEmpty == true)
    }

    @Test func concurrencyBelowOneIsTreatedAsOne() {
        let names = hosts(3)
        let fixture = fixture(hosts: names)
        fixture.upstream.holdReplies(true)
        let reports = start(fixture, names, families: [.a], concurrency: 0)
        #expect(fixture.upstream.heldCount == 1)
        fixture.upstream.releaseAll()
        #expect(fixture.upstream.peakInFlight == 1)
        #expect(reports.all.first?.count == 3)
    }

    @Test func repliesReleasedFromManyThreadsStillRespectTheWindowAndCompleteOnce() async {
        let names = hosts(100)
        let fixture = fixture(hosts: names)
        fixture.upstream.holdReplies(true)
        let reports = start(fixture, names, concurrency: 4)

        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var spins = 0
                    while reports.all.isEmpty && spins < 2_000_000 {
                        if !fixture.upstream.releaseOne() {
                            spins += 1
                            await Task.yield()
                        }
                    }
                }
            }
        }
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.count == 100)
        #expect(reports.all.first?.allSatisfy { $0.ok } == true)
        #expect(fixture.upstream.totalCalls == 200)
        #expect(fixture.upstream.peakInFlight <= 4)
    }
}
