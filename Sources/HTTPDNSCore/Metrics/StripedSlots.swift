import Synchronization

/// Lazily allocated blocks of striped atomics: `slots` blocks, each `width` counters wide, every
/// counter split into 16 stripes as `StripedCounter` splits its one (a thread adds to its stripe,
/// a read sums them). A block is allocated the first time one of its counters is added to, so a
/// table of many label combinations costs only the ones in use. Lock-free: the first writer of a
/// slot publishes its block with a compare-and-exchange; a loser frees its own and uses the winner's.
public final class StripedSlots: @unchecked Sendable {
    public let slots: Int
    /// Counters per block.
    public let width: Int
    /// Atomics per stripe of a block: `width` rounded up to whole 64-byte cache lines.
    private let stride: Int
    private let blocks: UnsafeMutablePointer<Atomic<UnsafeMutablePointer<Atomic<UInt64>>?>>

    public init(slots: Int, width: Int) {
        precondition(slots > 0 && width > 0)
        self.slots = slots
        self.width = width
        stride = (width + 7) / 8 * 8
        blocks = .allocate(capacity: slots)
        for index in 0..<slots { (blocks + index).initialize(to: Atomic(nil)) }
    }

    deinit {
        for index in 0..<slots {
            if let block = blocks[index].load(ordering: .acquiring) {
                block.deinitialize(count: StripedCounter.stripes * stride)
                block.deallocate()
            }
        }
        blocks.deinitialize(count: slots)
        blocks.deallocate()
    }

    /// Adds `delta` to counter `index` of block `slot`, on the calling thread's stripe.
    @inline(__always)
    public func add(_ delta: UInt64, slot: Int, index: Int) {
        let block = blocks[slot].load(ordering: .acquiring) ?? allocate(slot)
        block[StripedCounter.stripe() * stride + index].wrappingAdd(delta, ordering: .relaxed)
    }

    /// Adds `first` to counter `firstIndex` and `second` to counter `secondIndex` of block `slot`:
    /// one load of the block and one stripe for both.
    @inline(__always)
    public func add(_ first: UInt64, at firstIndex: Int, _ second: UInt64, at secondIndex: Int, slot: Int) {
        let block = blocks[slot].load(ordering: .acquiring) ?? allocate(slot)
        let base = StripedCounter.stripe() * stride
        block[base + firstIndex].wrappingAdd(first, ordering: .relaxed)
        block[base + secondIndex].wrappingAdd(second, ordering: .relaxed)
    }

    /// Whether block `slot` was ever added to.
    public func isAllocated(_ slot: Int) -> Bool { blocks[slot].load(ordering: .acquiring) != nil }

    /// The totals of block `slot`'s counters (summed over stripes); nil when it was never added to.
    public func totals(_ slot: Int) -> [UInt64]? {
        guard let block = blocks[slot].load(ordering: .acquiring) else { return nil }
        var totals = [UInt64](repeating: 0, count: width)
        for stripe in 0..<StripedCounter.stripes {
            for index in 0..<width { totals[index] &+= block[stripe * stride + index].load(ordering: .relaxed) }
        }
        return totals
    }

    private func allocate(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        let count = StripedCounter.stripes * stride
        let fresh = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: count)
        for index in 0..<count { (fresh + index).initialize(to: Atomic(0)) }
        let (exchanged, existing) = blocks[slot].compareExchange(
            expected: nil, desired: fresh, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        if exchanged { return fresh }
        fresh.deinitialize(count: count)
        fresh.deallocate()
        return existing!
    }
}
