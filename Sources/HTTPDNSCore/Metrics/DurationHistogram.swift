import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The buckets every duration histogram of `/metrics` uses: 100 µs to 10 s, upper bounds
/// inclusive (Prometheus `le`), then +Inf.
public enum DurationBuckets {
    /// Upper bounds in seconds, ascending; `index(nanoseconds:)` agrees with them (tested).
    public static let bounds: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// Buckets with +Inf.
    public static let count = 17

    /// The bucket of a duration: the first bound it does not exceed, `count - 1` beyond the last.
    /// Literal comparisons (no array on the hit path); a cache hit ends at the first.
    @inline(__always)
    public static func index(nanoseconds: UInt64) -> Int {
        switch nanoseconds {
        case ...100_000: 0
        case ...250_000: 1
        case ...500_000: 2
        case ...1_000_000: 3
        case ...2_500_000: 4
        case ...5_000_000: 5
        case ...10_000_000: 6
        case ...25_000_000: 7
        case ...50_000_000: 8
        case ...100_000_000: 9
        case ...250_000_000: 10
        case ...500_000_000: 11
        case ...1_000_000_000: 12
        case ...2_500_000_000: 13
        case ...5_000_000_000: 14
        case ...10_000_000_000: 15
        default: 16
        }
    }
}

/// The monotonic clock durations are measured with (`clock_gettime(CLOCK_MONOTONIC)`).
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary start; only differences mean something.
    @inline(__always)
    public static func nanoseconds() -> UInt64 {
        var spec = timespec()
        let result = clock_gettime(CLOCK_MONOTONIC, &spec)
        precondition(result == 0, "clock_gettime(CLOCK_MONOTONIC) failed")
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }
}

/// One histogram's counts: observations per bucket (not cumulative) and the sum of durations.
public struct HistogramCounts: Sendable, Equatable {
    /// `DurationBuckets.count` entries; the last is beyond 10 s.
    public var buckets = [UInt64](repeating: 0, count: DurationBuckets.count)
    public var sumNanoseconds: UInt64 = 0

    public init() {}

    public var count: UInt64 { buckets.reduce(0, &+) }
    public var sumSeconds: Double { Double(sumNanoseconds) / 1_000_000_000 }

    public mutating func record(nanoseconds: UInt64) {
        buckets[DurationBuckets.index(nanoseconds: nanoseconds)] &+= 1
        sumNanoseconds &+= nanoseconds
    }

    public mutating func record(seconds: Double) {
        record(nanoseconds: seconds <= 0 ? 0 : UInt64(min(seconds, 1e9) * 1_000_000_000))
    }

    public mutating func add(_ other: HistogramCounts) {
        for index in buckets.indices { buckets[index] &+= other.buckets[index] }
        sumNanoseconds &+= other.sumNanoseconds
    }
}

/// Duration histograms recorded from every HTTP thread, one per slot (a label combination the
/// caller numbers): `StripedSlots` blocks of the buckets and the sum, summed at scrape time.
/// Recording is two relaxed atomic adds on the thread's own cache lines.
public final class DurationHistograms: Sendable {
    fileprivate let storage: StripedSlots

    public init(slots: Int) {
        storage = StripedSlots(slots: slots, width: DurationBuckets.count + 1)
    }

    public var slots: Int { storage.slots }

    /// Whether anything was recorded yet: until then the histograms have no slot table of their
    /// own (`StripedSlots`), only this object.
    public var hasSlotTable: Bool { storage.hasTable }

    @inline(__always)
    public func record(slot: Int, nanoseconds: UInt64) {
        storage.add(1, at: DurationBuckets.index(nanoseconds: nanoseconds), nanoseconds, at: DurationBuckets.count, slot: slot)
    }

    /// The counts of `slot`; nil when nothing was ever recorded there.
    public func counts(_ slot: Int) -> HistogramCounts? {
        guard let totals = storage.totals(slot) else { return nil }
        var counts = HistogramCounts()
        counts.buckets = Array(totals[..<DurationBuckets.count])
        counts.sumNanoseconds = totals[DurationBuckets.count]
        return counts
    }
}

extension DurationHistograms {
    /// Histograms recorded without a retain, for the request path (see `StripedCounter.Unretained`:
    /// a retain of the shared object per request bounces its header between cores). Valid while
    /// the histograms live: keep it beside them.
    public struct Unretained: @unchecked Sendable {
        private let storage: Unmanaged<StripedSlots>

        public init(_ histograms: DurationHistograms) {
            storage = .passUnretained(histograms.storage)
        }

        @inline(__always)
        public func record(slot: Int, nanoseconds: UInt64) {
            storage._withUnsafeGuaranteedRef {
                $0.add(1, at: DurationBuckets.index(nanoseconds: nanoseconds), nanoseconds, at: DurationBuckets.count, slot: slot)
            }
        }
    }
}
