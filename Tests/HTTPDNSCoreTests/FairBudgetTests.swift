import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

/// `FairBudget`: an account's upstream budget shared among the clients asking, on a manual clock.
@Suite struct FairBudgetTests {
    let flooder = ClientID(key: 0xF100D)
    let quiet = ClientID(key: 0x0CA1)

    /// Asks for `client` every `every` seconds until `until`; returns how many were allowed.
    private func ask(
        _ budget: inout FairBudget, _ client: ClientID?, every: Double, until end: Timestamp, clock: ManualClock, rate: Double
    ) -> Int {
        var allowed = 0
        while clock.now() < end {
            if budget.take(for: client, at: clock.now(), rate: rate) == .allowed { allowed += 1 }
            clock.advance(by: every)
        }
        return allowed
    }

    @Test func aClientAloneGetsTheWholeBudgetOverTimeInBurstsOfHalfOfIt() {
        let clock = ManualClock()
        var budget = FairBudget()
        // At once: half the bucket (the other half is kept for a client yet to come).
        let burst = (0..<20).filter { _ in budget.take(for: flooder, at: clock.now(), rate: 10) == .allowed }.count
        #expect(burst == 5)
        // Asking all the time, it gets the whole rate: nothing is wasted while nobody else asks.
        let steady = ask(&budget, flooder, every: 0.001, until: clock.now() + 10, clock: clock, rate: 10)
        #expect(steady >= 98 && steady <= 101, "\(steady)")
    }

    @Test func aNewcomerIsServedWhileAFloodSpendsTheBudgetAndTheFloodGetsTheRest() {
        let clock = ManualClock()
        var budget = FairBudget()
        _ = ask(&budget, flooder, every: 0.001, until: clock.now() + 2, clock: clock, rate: 10)
        // The flood goes on; another client asks twice a second (an A and an AAAA each time).
        var quietAllowed = 0, quietAsked = 0, floodAllowed = 0
        let end = clock.now() + 10
        var nextQuiet = clock.now()
        while clock.now() < end {
            if clock.now() >= nextQuiet {
                for _ in 0..<2 {
                    quietAsked += 1
                    if budget.take(for: quiet, at: clock.now(), rate: 10) == .allowed { quietAllowed += 1 }
                }
                nextQuiet += 0.5
            }
            if budget.take(for: flooder, at: clock.now(), rate: 10) == .allowed { floodAllowed += 1 }
            clock.advance(by: 0.001)
        }
        #expect(quietAllowed == quietAsked, "\(quietAllowed) of \(quietAsked)")
        // Work-conserving: the flood had what the other client left, and the total is the rate.
        #expect(floodAllowed + quietAllowed >= 98 && floodAllowed + quietAllowed <= 101, "\(floodAllowed) + \(quietAllowed)")
    }

    @Test func manyOccasionalClientsAreServedBeforeAFlood() {
        let clock = ManualClock()
        var budget = FairBudget()
        _ = ask(&budget, flooder, every: 0.001, until: clock.now() + 2, clock: clock, rate: 20)
        // 72 clients, each asking once every 6 s, spread over the seconds: 12 a second in all.
        let others = (1...72).map { ClientID(key: UInt64($0) << 20) }
        var refused = 0, asked = 0
        let start = clock.now()
        var tick = 0
        while clock.now() < start + 12 {
            if tick % 83 == 0 {
                let client = others[(tick / 83) % others.count]
                asked += 1
                if budget.take(for: client, at: clock.now(), rate: 20) != .allowed { refused += 1 }
            }
            _ = budget.take(for: flooder, at: clock.now(), rate: 20)
            clock.advance(by: 0.001)
            tick += 1
        }
        #expect(asked >= 140)
        #expect(refused == 0, "\(refused) of \(asked) refused")
    }

    @Test func aClientPastItsShareIsRefusedWithTheSecondsUntilItMayAskAgain() throws {
        let clock = ManualClock()
        var budget = FairBudget()
        for _ in 0..<5 { #expect(budget.take(for: flooder, at: clock.now(), rate: 10) == .allowed) }
        guard case .refused(let retryAfter) = budget.take(for: flooder, at: clock.now(), rate: 10) else {
            Issue.record("not refused")
            return
        }
        #expect(retryAfter == 1)
        #expect(budget.activeClients(at: clock.now()) == 1)
        // Its share refills: after a while it is a newcomer again, with nothing held against it.
        clock.advance(by: 10)
        #expect(budget.activeClients(at: clock.now()) == 0)
        #expect(budget.take(for: flooder, at: clock.now(), rate: 10) == .allowed)
    }

    @Test func workWithoutAClientTakesFromTheWholeBucket() {
        let clock = ManualClock()
        var budget = FairBudget()
        let allowed = (0..<20).filter { _ in budget.take(for: nil, at: clock.now(), rate: 10) == .allowed }.count
        #expect(allowed == 10)
        #expect(budget.take(for: quiet, at: clock.now(), rate: 10) == .refused(retryAfter: 1))
    }
}
