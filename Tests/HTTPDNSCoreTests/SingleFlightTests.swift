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
        let flight = SingleFlight<String, Int>()
        let received = Mutex<[Int]>([])
        #expect(flight.join("k") { value in received.withLock { $0.append(value) } })
        #expect(!flight.join("k") { value in received.withLock { $0.append(value * 10) } })
        #expect(flight.join("other") { _ in })
        #expect(flight.inFlight == 2)

        flight.complete("k", with: 7)
        #expect(received.withLock { $0 } == [7, 70])
        #expect(flight.inFlight == 1)
        // Completing again calls nobody; the next join leads a new flight.
        flight.complete("k", with: 8)
        #expect(received.withLock { $0 } == [7, 70])
        #expect(flight.join("k") { _ in })
    }
}
