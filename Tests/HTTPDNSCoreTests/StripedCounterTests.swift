import Dispatch
import HTTPDNSCore
import Testing

@Suite struct StripedCounterTests {
    @Test func incrementsFromManyThreadsAreAllCounted() {
        let counter = StripedCounter()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { counter.increment() }
        }
        #expect(counter.value == 80_000)
    }

    @Test func addsAndSubtractsFromDifferentThreadsSumToTheDifference() {
        let counter = StripedCounter()
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            for _ in 0..<1_000 { counter.add(index.isMultiple(of: 2) ? 3 : -1) }
        }
        #expect(counter.signedValue == 2 * 3_000 - 2 * 1_000)
        counter.add(-10_000)
        #expect(counter.signedValue == -6_000)
    }
}
