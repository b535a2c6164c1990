import Dispatch
import HTTPDNSServer
import Testing

@Suite struct HTTPMetricsTests {
    @Test func commonAndRareStatusesAreCountedAndSorted() {
        let metrics = HTTPMetrics()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<1_000 { metrics.record(status: 200) }
        }
        metrics.record(status: 418)
        metrics.record(status: 404)
        metrics.record(status: 404)
        metrics.record(status: 42)  // not an HTTP status: ignored
        #expect(metrics.snapshot.map(\.0) == [200, 404, 418])
        #expect(metrics.snapshot.map(\.1) == [4_000, 2, 1])
    }
}
