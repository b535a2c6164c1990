import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A counter incremented from many threads on every request. One shared atomic makes every
/// increment bounce its cache line between cores; here each thread adds to one of 16 stripes
/// (a cache line each, picked by a hash of the thread), and a read sums them. Reads are exact
/// once the writers are quiet, and never lose an increment.
///
/// A stripe's line has room for 8 counters: `group(_:)` makes up to 8 counters that share their
/// lines (1 KB for all of them instead of 1 KB each), as an account's counters do. They are
/// incremented by the same threads, so sharing a line costs no bouncing.
public final class StripedCounter: @unchecked Sendable {
    static let stripes = 16
    /// Atomics per stripe: 8 × 8 bytes, one 64-byte cache line.
    private static let stride = 8

    /// The lines of one counter or of a group, freed with the last counter that uses them.
    private final class Lines: @unchecked Sendable {
        let base: UnsafeMutablePointer<Atomic<UInt64>>

        init() {
            base = .allocate(capacity: StripedCounter.stripes * StripedCounter.stride)
            for index in 0..<(StripedCounter.stripes * StripedCounter.stride) { (base + index).initialize(to: Atomic(0)) }
        }

        deinit {
            base.deinitialize(count: StripedCounter.stripes * StripedCounter.stride)
            base.deallocate()
        }
    }

    /// This counter's atomic in stripe 0; stripe `s`'s is `stride × s` further.
    private let storage: UnsafeMutablePointer<Atomic<UInt64>>
    private let lines: Lines

    public convenience init() {
        self.init(lines: Lines(), lane: 0)
    }

    private init(lines: Lines, lane: Int) {
        self.lines = lines
        storage = lines.base + lane
    }

    /// `count` (1...8) counters sharing one set of stripe lines.
    public static func group(_ count: Int) -> [StripedCounter] {
        precondition((1...stride).contains(count), "a group shares one 64-byte line per stripe: 1 to 8 counters")
        let lines = Lines()
        return (0..<count).map { StripedCounter(lines: lines, lane: $0) }
    }

    /// The calling thread's stripe: a multiplicative hash of its pthread handle (thread
    /// structures sit megabytes apart, so the low bits alone would put every thread on one).
    /// (`StripedSlots` uses the same stripes.)
    @inline(__always)
    static func stripe() -> Int {
        let handle = UInt64(pthread_self())
        return Int(truncatingIfNeeded: (handle &* 0x9E37_79B9_7F4A_7C15) >> 60)
    }

    @inline(__always)
    public func increment() {
        storage[Self.stripe() * Self.stride].add(1, ordering: .relaxed)
    }

    /// Adds `delta` (negative to subtract); stripes wrap, their sum does not.
    @inline(__always)
    public func add(_ delta: Int) {
        storage[Self.stripe() * Self.stride].wrappingAdd(UInt64(bitPattern: Int64(delta)), ordering: .relaxed)
    }

    /// The total as an unsigned count.
    public var value: UInt64 {
        var total: UInt64 = 0
        for stripe in 0..<Self.stripes { total &+= storage[stripe * Self.stride].load(ordering: .relaxed) }
        return total
    }

    /// The total read as a signed number (for counters that go up and down).
    public var signedValue: Int { Int(Int64(bitPattern: value)) }
}

extension StripedCounter {
    /// A counter incremented without a retain, for the request path. Every HTTP thread increments
    /// the same counters; calling a `StripedCounter` held in a property retains and releases it
    /// around the call (the atomic add keeps the optimiser from dropping the pair), and that write
    /// to the counter's header, shared by every thread, bounces between cores as the single atomic
    /// the stripes avoid would. Valid while the counter lives: keep it beside the counter itself.
    public struct Unretained: @unchecked Sendable {
        private let counter: Unmanaged<StripedCounter>

        public init(_ counter: StripedCounter) {
            self.counter = .passUnretained(counter)
        }

        @inline(__always)
        public func increment() {
            counter._withUnsafeGuaranteedRef { $0.increment() }
        }

        @inline(__always)
        public func add(_ delta: Int) {
            counter._withUnsafeGuaranteedRef { $0.add(delta) }
        }
    }
}
