import Dispatch
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// Many threads resolving at once against an upstream that answers on other threads.
@Suite struct EngineConcurrencyTests {
    @Test(.timeLimit(.minutes(1)))
    func everyRequestGetsExactlyOneOutcome() async {
        let fixture = EngineFixture()
        let hosts = (0..<20).map { "h\($0).example" }
        for (index, host) in hosts.enumerated() {
            // Half the names are never cached (TTL 0), so flights start and end all the time.
            fixture.upstream.setAnswer(host, addresses: ["192.0.2.\(index)"], ttl: index % 2 == 0 ? 300 : 0)
        }
        fixture.upstream.deliverAsynchronously(on: DispatchQueue.global())

        let tasks = 8
        let perTask = 250
        let total = tasks * perTask
        let outcomes = Locked([Int](repeating: 0, count: total))
        let wrong = Locked([String]())
        let countdown = Countdown(total)

        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for step in 0..<perTask {
                        let id = task * perTask + step
                        let index = (id * 7) % hosts.count
                        let check: @Sendable (FamilyOutcome) -> Void = { outcome in
                            if (try? outcome.get().addresses) != ["192.0.2.\(index)"] {
                                wrong.withLock { $0.append("\(hosts[index]): \(outcome)") }
                            }
                            outcomes.withLock { $0[id] += 1 }
                            countdown.tick()
                        }
                        if let sync = fixture.engine.resolve(host: .valid(hosts[index]), family: .a, completion: check) {
                            check(sync)
                        }
                    }
                }
            }
        }
        await countdown.wait()

        #expect(outcomes.value.allSatisfy { $0 == 1 })
        #expect(wrong.value.isEmpty)
        // No flight was left behind: a new miss asks the upstream again instead of joining one.
        fixture.upstream.holdReplies(true)
        let callsBefore = fixture.upstream.calls(hosts[1])
        _ = fixture.resolve(hosts[1])
        #expect(fixture.upstream.calls(hosts[1]) == callsBefore + 1)
        fixture.upstream.releaseAll()
        // Cached names were asked far less often than they were requested.
        for index in stride(from: 0, to: hosts.count, by: 2) {
            #expect(fixture.upstream.calls(hosts[index]) < total / hosts.count)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func preloadWindowHoldsWithRepliesOnOtherThreads() async {
        let fixture = EngineFixture()
        let hosts = (0..<200).map { "p\($0).example" }
        for host in hosts {
            fixture.upstream.setAnswer(host, .a, addresses: ["192.0.2.1"], ttl: 300)
            fixture.upstream.setAnswer(host, .aaaa, addresses: ["2001:db8::1"], ttl: 300)
        }
        fixture.upstream.deliverAsynchronously(on: DispatchQueue.global())
        let reports = Locked([[PreloadOutcome]]())
        let countdown = Countdown(1)
        Preloader.start(engine: fixture.engine, hosts: hosts.map { HostName.valid($0) }, families: [.a, .aaaa], concurrency: 5) {
            outcomes in
            reports.withLock { $0.append(outcomes) }
            countdown.tick()
        }
        await countdown.wait()

        #expect(reports.value.count == 1)
        #expect(reports.value.first?.map(\.host.value) == hosts)
        #expect(reports.value.first?.allSatisfy { $0.ok } == true)
        #expect(fixture.upstream.totalCalls == 400)
        #expect(fixture.upstream.peakInFlight <= 5)
    }
}
