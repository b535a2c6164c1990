import Dispatch
import Testing

@testable import HTTPDNSCore

@Suite struct DurationHistogramTests {
    @Test func bucketIndexAgreesWithTheBoundsAndTheirInclusiveUpperEdge() {
        #expect(DurationBuckets.bounds.count + 1 == DurationBuckets.count)
        #expect(DurationBuckets.bounds.first == 0.0001 && DurationBuckets.bounds.last == 10)
        for (index, bound) in DurationBuckets.bounds.enumerated() {
            let nanoseconds = UInt64((bound * 1e9).rounded())
            #expect(DurationBuckets.index(nanoseconds: nanoseconds) == index, "\(bound) s is in its own bucket")
            #expect(DurationBuckets.index(nanoseconds: nanoseconds + 1) == index + 1, "just above \(bound) s is in the next")
        }
        #expect(DurationBuckets.index(nanoseconds: 0) == 0)
        #expect(DurationBuckets.index(nanoseconds: UInt64.max) == DurationBuckets.count - 1)
    }

    @Test func recordsFromManyThreadsAreAllCountedInTheirBucketsAndSum() throws {
        let histograms = DurationHistograms(slots: 4)
        #expect(histograms.counts(2) == nil)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for _ in 0..<500 {
                histograms.record(slot: 2, nanoseconds: 50_000)  // 50 µs: first bucket
                histograms.record(slot: 2, nanoseconds: 3_000_000)  // 3 ms: le 0.005
            }
            if thread == 0 { histograms.record(slot: 2, nanoseconds: 20_000_000_000) }  // 20 s: +Inf
        }
        let counts = try #require(histograms.counts(2))
        #expect(counts.count == 8_001)
        #expect(counts.buckets[0] == 4_000)
        #expect(counts.buckets[5] == 4_000)
        #expect(counts.buckets[16] == 1)
        #expect(counts.sumNanoseconds == 4_000 * 50_000 + 4_000 * 3_000_000 + 20_000_000_000)
        #expect(histograms.counts(0) == nil && histograms.counts(3) == nil, "slots never recorded to are not allocated")
    }

    /// Until their first record, histograms share one empty slot table (an idle account pays no
    /// 1.3 KB table): first records racing on several instances each get a table of their own, and
    /// what one records never shows in another or in a fresh one.
    @Test func histogramsStartWithoutATableAndFirstRecordsGetTheirOwn() throws {
        let instances = (0..<4).map { _ in DurationHistograms(slots: 8) }
        #expect(instances.allSatisfy { !$0.hasSlotTable })
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            let histograms = instances[thread % 4]
            for _ in 0..<100 { histograms.record(slot: thread % 4, nanoseconds: 50_000) }
        }
        for (index, histograms) in instances.enumerated() {
            #expect(histograms.hasSlotTable)
            #expect(histograms.counts(index)?.count == 200)
            #expect((0..<8).filter { histograms.counts($0) != nil } == [index])
        }
        let fresh = DurationHistograms(slots: 8)
        #expect(!fresh.hasSlotTable)
        #expect((0..<8).allSatisfy { fresh.counts($0) == nil })
    }

    @Test func countsAddAndRecordSeconds() {
        var a = HistogramCounts()
        a.record(seconds: 0.2)
        var b = HistogramCounts()
        b.record(seconds: 12)
        a.add(b)
        #expect(a.count == 2)
        #expect(a.buckets[10] == 1 && a.buckets[16] == 1)
        #expect(abs(a.sumSeconds - 12.2) < 1e-9)
    }
}
