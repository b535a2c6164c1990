import HTTPDNSTestSupport
import Synchronization
import Testing

@testable import HTTPDNSCore

/// The engine's use of the speed test: probes after an answer with several addresses, off the
/// request path; later answers list addresses fastest first, unreachable ones last; measurements
/// are remembered across refreshes.
@Suite struct SpeedOrderingTests {
    /// A speed tester that records each call and completes only when the test says so.
    final class ScriptedSpeedTester: SpeedTester {
        struct Call: Sendable {
            var addresses: [String]
            var port: Int
            var timeout: Double
            var completion: @Sendable ([String: ProbeResult]) -> Void
        }

        private let calls = Mutex<[Call]>([])

        func probe(_ addresses: [String], port: Int, timeout: Double, completion: @escaping @Sendable ([String: ProbeResult]) -> Void) {
            calls.withLock { $0.append(Call(addresses: addresses, port: port, timeout: timeout, completion: completion)) }
        }

        var recorded: [Call] { calls.withLock { $0 } }

        /// Completes the oldest call still open with `results`.
        func finish(_ results: [String: ProbeResult]) {
            let call = calls.withLock { $0.first }
            call?.completion(results)
        }
    }

    private let addresses = ["192.0.2.1", "192.0.2.2", "192.0.2.3"]

    private func fixture(speedTest: Bool = true) -> (EngineFixture, ScriptedSpeedTester) {
        let tester = ScriptedSpeedTester()
        let fixture = EngineFixture(
            config: .test {
                $0.speedTestEnable = speedTest
                $0.speedPort = 8443
                $0.speedTestTimeout = 0.5
            },
            speedTester: tester)
        fixture.upstream.setAnswer("shop.example", addresses: addresses, ttl: 60)
        return (fixture, tester)
    }

    @Test func anAnswerWithSeveralAddressesIsProbedOnceInTheBackground() throws {
        let (fixture, tester) = fixture()
        let first = fixture.resolve("shop.example")
        #expect(first.answer?.addresses == addresses)
        let call = try #require(tester.recorded.first)
        #expect(call.addresses == addresses)
        #expect(call.port == 8443)
        #expect(call.timeout == 0.5)
        #expect(fixture.engine.metrics.speedTestRuns.value == 1)

        // Hits while the probe runs: upstream order, no second probe.
        #expect(fixture.resolve("shop.example").answer?.addresses == addresses)
        #expect(tester.recorded.count == 1)
    }

    @Test func laterAnswersListTheFastestFirstAndUnreachableLast() {
        let (fixture, tester) = fixture()
        _ = fixture.resolve("shop.example")
        tester.finish([
            "192.0.2.1": .unreachable,
            "192.0.2.2": .reachable(seconds: 0.030),
            "192.0.2.3": .reachable(seconds: 0.004),
        ])
        #expect(fixture.resolve("shop.example").answer?.addresses == ["192.0.2.3", "192.0.2.2", "192.0.2.1"])
        #expect(fixture.engine.metrics.speedProbesReachable.value == 2)
        #expect(fixture.engine.metrics.speedProbesUnreachable.value == 1)
    }

    @Test func measurementsOutliveARefreshAndSpareItsProbe() {
        let (fixture, tester) = fixture()
        _ = fixture.resolve("shop.example")
        tester.finish(["192.0.2.1": .reachable(seconds: 0.05), "192.0.2.2": .unreachable, "192.0.2.3": .reachable(seconds: 0.01)])
        fixture.clock.advance(by: 61)
        let refreshed = fixture.resolve("shop.example")
        #expect(!refreshed.fromCache)
        #expect(refreshed.answer?.addresses == ["192.0.2.3", "192.0.2.1", "192.0.2.2"])
        #expect(tester.recorded.count == 1)
    }

    @Test func expiredMeasurementsAreProbedAgain() {
        let (fixture, tester) = fixture()
        _ = fixture.resolve("shop.example")
        tester.finish(["192.0.2.1": .reachable(seconds: 0.05), "192.0.2.2": .unreachable, "192.0.2.3": .reachable(seconds: 0.01)])
        fixture.clock.advance(by: fixture.engine.rtt.ttl + 1)
        _ = fixture.resolve("shop.example")
        #expect(tester.recorded.count == 2)
    }

    @Test func withoutTheOptionOrWithOneAddressNothingIsProbed() {
        let (off, offTester) = fixture(speedTest: false)
        _ = off.resolve("shop.example")
        #expect(offTester.recorded.isEmpty)

        let (single, singleTester) = fixture()
        single.upstream.setAnswer("one.example", addresses: ["192.0.2.9"], ttl: 60)
        _ = single.resolve("one.example")
        #expect(singleTester.recorded.isEmpty)
    }
}
