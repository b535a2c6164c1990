import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

@Suite struct RTTTableTests {
    private func ms(_ milliseconds: Double) -> ProbeResult { .reachable(seconds: milliseconds / 1000) }

    @Test func orderPutsReachableByRTTThenUnmeasuredThenUnreachable() {
        let clock = ManualClock()
        let table = RTTTable()
        table.record(["10.0.0.1": .unreachable, "10.0.0.2": ms(30), "10.0.0.4": ms(5), "10.0.0.5": ms(12)], at: clock.now())
        let order = table.order(["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"], at: clock.now())
        #expect(order == ["10.0.0.4", "10.0.0.5", "10.0.0.2", "10.0.0.3", "10.0.0.6", "10.0.0.1"])
    }

    @Test func orderKeepsTheOriginalOrderAmongTies() {
        let now = ManualClock().now()
        let table = RTTTable()
        table.record(["a": ms(7), "b": ms(7), "c": .unreachable, "d": .unreachable, "e": ms(7)], at: now)
        #expect(table.order(["c", "x", "b", "d", "e", "y", "a"], at: now) == ["b", "e", "a", "x", "y", "c", "d"])
        #expect(table.order(["d", "y", "a", "c", "x", "e", "b"], at: now) == ["a", "e", "b", "y", "x", "d", "c"])
    }

    @Test func orderWithoutMeasurementsKeepsTheAnswerAsItCame() {
        let table = RTTTable()
        #expect(table.order(["::1", "10.0.0.9", "10.0.0.1"], at: 1_700_000_000) == ["::1", "10.0.0.9", "10.0.0.1"])
        #expect(table.order([], at: 1_700_000_000) == [])
    }

    @Test func orderKeepsDuplicates() {
        let table = RTTTable()
        table.record(["a": ms(9), "b": ms(1)], at: 0)
        #expect(table.order(["a", "b", "a"], at: 0) == ["b", "a", "a"])
    }

    @Test func measurementsExpireAfterTheirTTL() {
        let clock = ManualClock()
        let table = RTTTable(ttl: 60)
        table.record(["a": ms(50), "b": .unreachable], at: clock.now())
        clock.advance(by: 59.9)
        #expect(table.result(for: "a", at: clock.now()) == ms(50))
        #expect(table.order(["b", "c", "a"], at: clock.now()) == ["a", "c", "b"])
        clock.advance(by: 0.1)
        #expect(table.result(for: "a", at: clock.now()) == nil)
        #expect(table.result(for: "b", at: clock.now()) == nil)
        // Expired measurements count as unmeasured: the answer's own order again.
        #expect(table.order(["b", "c", "a"], at: clock.now()) == ["b", "c", "a"])
    }

    @Test func aNewMeasurementReplacesTheOldOneAndRestartsItsTTL() {
        let clock = ManualClock()
        let table = RTTTable(ttl: 60)
        table.record(["a": .unreachable], at: clock.now())
        clock.advance(by: 50)
        table.record(["a": ms(20)], at: clock.now())
        clock.advance(by: 50)
        #expect(table.result(for: "a", at: clock.now()) == ms(20))
        #expect(table.count == 1)
    }

    @Test func needsProbeUntilEveryAddressHasAnUnexpiredMeasurement() {
        let clock = ManualClock()
        let table = RTTTable(ttl: 10)
        #expect(table.needsProbe(["a", "b"], at: clock.now()))
        table.record(["a": ms(3)], at: clock.now())
        #expect(table.needsProbe(["a", "b"], at: clock.now()))
        table.record(["b": .unreachable], at: clock.now())
        #expect(!table.needsProbe(["a", "b"], at: clock.now()))
        #expect(!table.needsProbe([], at: clock.now()))
        clock.advance(by: 10)
        #expect(table.needsProbe(["a", "b"], at: clock.now()))
    }

    @Test func aFullTableForgetsTheOldestMeasurement() {
        let table = RTTTable(capacity: 2)
        table.record(["a": ms(1)], at: 100)
        table.record(["b": ms(2)], at: 101)
        // Reading does not make a measurement newer.
        #expect(table.result(for: "a", at: 102) == ms(1))
        table.record(["c": ms(3)], at: 103)
        #expect(table.count == 2)
        #expect(table.result(for: "a", at: 103) == nil)
        #expect(table.result(for: "b", at: 103) == ms(2))
        #expect(table.result(for: "c", at: 103) == ms(3))
    }

    @Test func capacityZeroRemembersNothing() {
        let table = RTTTable(capacity: 0)
        table.record(["a": ms(1)], at: 0)
        #expect(table.count == 0)
        #expect(table.needsProbe(["a"], at: 0))
    }

    @Test func removeAllForgetsEverything() {
        let table = RTTTable()
        table.record(["a": ms(1), "b": .unreachable], at: 0)
        table.removeAll()
        #expect(table.count == 0)
        #expect(table.result(for: "a", at: 0) == nil)
    }
}
