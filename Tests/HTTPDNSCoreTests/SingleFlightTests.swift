import HTTPDNSTestSupport
import Synchronization
import Testing

@testable import HTTPDNSCore

@Suite struct SingleFlightTests {
    @Test func concurrentMissesShareOneUpstreamCall() async throws {
        let fixture = EngineFixture()
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        fixture.upstream.holdReplies(true)

        let resolutions = await withTaskGroup(of: Resolution.self) { group in
            for _ in 0..<50 { group.addTask { fixture.resolve("www.example.com") } }
            return await group.reduce(into: [Resolution]()) { $0.append($1) }
        }

        #expect(resolutions.count == 50)
        #expect(resolutions.allSatisfy { !$0.fromCache && $0.outcome == nil })
        #expect(fixture.upstream.calls("www.example.com") == 1)
        #expect(fixture.engine.metrics.singleFlightJoined.value == 49)

        #expect(fixture.upstream.release() == 1)
        for resolution in resolutions {
            #expect(resolution.box.values.count == 1)
            #expect(resolution.answer?.addresses == ["192.0.2.1"])
            #expect(resolution.answer?.source == .upstream)
        }
        #expect(fixture.upstream.totalCalls == 1)
    }

    @Test func waitersOfAFailedFlightAllGetTheFailure() {
        let fixture = EngineFixture(config: .test { $0.localDNSFallback = false })
        fixture.upstream.setFailure("down.example", .a, .timeout)
        fixture.upstream.holdReplies(true)
        let resolutions = (0..<5).map { _ in fixture.resolve("down.example") }
        fixture.upstream.release()
        for resolution in resolutions {
            #expect(resolution.box.values.count == 1)
            #expect(resolution.failure?.timedOut == true)
        }
        #expect(fixture.upstream.calls("down.example") == 1)
    }

    @Test func aNewFlightStartsOnceThePreviousOneEnded() {
        let fixture = EngineFixture(config: .test { $0.cacheEnable = false })
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        fixture.upstream.holdReplies(true)
        _ = fixture.resolve("www.example.com")
        _ = fixture.resolve("www.example.com")
        fixture.upstream.release()
        _ = fixture.resolve("www.example.com")
        #expect(fixture.upstream.calls("www.example.com") == 2)
        #expect(fixture.engine.metrics.singleFlightJoined.value == 1)
    }

    @Test func differentFamiliesAreSeparateFlights() {
        let fixture = EngineFixture()
        fixture.upstream.setAnswer("www.example.com", .a, addresses: ["192.0.2.1"], ttl: 300)
        fixture.upstream.setAnswer("www.example.com", .aaaa, addresses: ["2001:db8::1"], ttl: 300)
        fixture.upstream.holdReplies(true)
        let a = fixture.resolve("www.example.com", .a)
        let aaaa = fixture.resolve("www.example.com", .aaaa)
        #expect(fixture.upstream.heldCount == 2)
        fixture.upstream.release()
        #expect(a.answer?.addresses == ["192.0.2.1"])
        #expect(aaaa.answer?.addresses == ["2001:db8::1"])
    }

    @Test func leaderStartsWorkAndFollowersJoin() {
        let flight = SingleFlight()
        let key = CacheKey(host: .valid("k.example"), family: .a)
        let other = CacheKey(host: .valid("k.example"), family: .aaaa)
        func answer(_ ttl: UInt32) -> FamilyOutcome {
            .success(ResolvedAnswer(addresses: ["192.0.2.1"], ttl: ttl, originTTL: ttl, source: .upstream))
        }
        let received = Mutex<[String]>([])
        #expect(flight.join(key) { outcome in received.withLock { $0.append("first \(outcome.ttl)") } })
        #expect(!flight.join(key) { outcome in received.withLock { $0.append("second \(outcome.ttl)") } })
        #expect(!flight.join(key) { outcome in received.withLock { $0.append("third \(outcome.ttl)") } })
        #expect(flight.join(other) { _ in })
        #expect(flight.inFlight == 2)

        flight.complete(key, with: answer(7))
        #expect(received.withLock { $0 } == ["first 7", "second 7", "third 7"])
        #expect(flight.inFlight == 1)
        // Completing again calls nobody; the next join leads a new flight.
        flight.complete(key, with: answer(8))
        #expect(received.withLock { $0 }.count == 3)
        #expect(flight.join(key) { _ in })
        // A flight that is running takes no caller through `startIfIdle`.
        #expect(!flight.startIfIdle(key) { _ in Issue.record("not a waiter") })
        #expect(flight.startIfIdle(CacheKey(host: .valid("idle.example"), family: .a)) { _ in })
    }
}

extension FamilyOutcome {
    /// The answer's TTL, 0 for a failure.
    fileprivate var ttl: UInt32 { (try? get())?.ttl ?? 0 }
}
