import HTTPDNSCore
import Synchronization
import Testing

@Suite struct OutcomeGatherTests {
    final class Calls: Sendable {
        private let storage = Mutex<[[String]]>([])
        func append(_ values: [String]) { storage.withLock { $0.append(values) } }
        var all: [[String]] { storage.withLock { $0 } }
    }

    @Test func firesOnceWithValuesInSlotOrderWhenTheLastSlotIsFilled() {
        let calls = Calls()
        let gather = OutcomeGather<String>(count: 3) { calls.append($0) }
        gather.fill(2, with: "c")
        gather.fill(0, with: "a")
        #expect(calls.all.isEmpty)
        gather.fill(1, with: "b")
        #expect(calls.all == [["a", "b", "c"]])
    }

    @Test func fillingASlotTwiceNeitherOverwritesNorCountsTwice() {
        let calls = Calls()
        let gather = OutcomeGather<String>(count: 2) { calls.append($0) }
        gather.fill(0, with: "first")
        gather.fill(0, with: "second")
        #expect(calls.all.isEmpty)
        gather.fill(1, with: "b")
        gather.fill(1, with: "again")
        #expect(calls.all == [["first", "b"]])
    }

    @Test func zeroSlotsFireAtOnce() {
        let calls = Calls()
        _ = OutcomeGather<String>(count: 0) { calls.append($0) }
        #expect(calls.all == [[]])
    }

    @Test func concurrentFillsFireExactlyOnce() async {
        let calls = Calls()
        let gather = OutcomeGather<String>(count: 500) { calls.append($0) }
        await withTaskGroup(of: Void.self) { group in
            for slot in 0..<500 {
                group.addTask {
                    gather.fill(slot, with: "v\(slot)")
                    gather.fill(slot, with: "dup")
                }
            }
        }
        #expect(calls.all.count == 1)
        #expect(calls.all.first == (0..<500).map { "v\($0)" })
    }
}
