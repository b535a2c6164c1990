import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A counter incremented from many threads on every request. One shared atomic makes every
/// increment bounce its cache line between cores; here each thread adds to one of 16 stripes
/// (a cache line each, picked by a hash of the thread), and a read sums them. Reads are exact
/// once the writers are quiet, and never lose an increment.
public final class StripedCounter: @unchecked Sendable {
    static let stripes = 16
    /// Atomics per stripe: 8 × 8 bytes, one 64-byte cache line.
    private static let stride = 8
    private let storage: UnsafeMutablePointer<Atomic<UInt64>>

    public init() {
        storage = .allocate(capacity: Self.stripes * Self.stride)
        for index in 0..<(Self.stripes * Self.stride) { (storage + index).initialize(to: Atomic(0)) }
    }

    deinit {
        storage.deinitialize(count: Self.stripes * Self.stride)
        storage.deallocate()
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
