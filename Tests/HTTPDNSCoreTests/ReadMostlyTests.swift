import HTTPDNSCore
import Synchronization
import Testing

@Suite struct ReadMostlyTests {
    @Test func readersSeeEachPublishedValue() {
        let cell = ReadMostly([1, 2])
        #expect(cell.value == [1, 2])
        let old = cell.update { ($0 + [3], $0.count) }
        #expect(old == 2)
        #expect(cell.value == [1, 2, 3])
        #expect(cell.retiredCount == 1)
    }

    @Test func concurrentReadersNeverSeeATornValue() async {
        let cell = ReadMostly((0, 0))
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for index in 1...2_000 { cell.update { _ in ((index, -index), ()) } }
                return true
            }
            for _ in 0..<2 {
                group.addTask {
                    for _ in 0..<20_000 where cell.value.0 != -cell.value.1 {
                        // Two reads may see two values; each one must be whole.
                        let snapshot = cell.value
                        if snapshot.0 != -snapshot.1 { return false }
                    }
                    return true
                }
            }
            for await whole in group { #expect(whole) }
        }
    }
}
