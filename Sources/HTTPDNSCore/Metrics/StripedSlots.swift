import Synchronization

/// Lazily allocated blocks of striped atomics: `slots` blocks, each `width` counters wide, every
/// counter split into 16 stripes as `StripedCounter` splits its one (a thread adds to its stripe,
/// a read sums them). A block is allocated the first time one of its counters is added to, so a
/// table of many label combinations costs only the ones in use. Lock-free: the first writer of a
/// slot publishes its block with a compare-and-exchange; a loser frees its own and uses the winner's.
///
/// The table of block pointers (8 bytes a slot: 1.3 KB for an account's 160 request-duration
/// slots) is itself allocated at the first add: until then `blocks` points at one table of empty
/// slots shared by every instance (never written), so an idle instance costs its object alone and
/// an add still loads one pointer and one block, as with a table of its own.
public final class StripedSlots: @unchecked Sendable {
    public let slots: Int
    /// Counters per block.
    public let width: Int
    /// Atomics per stripe of a block: `width` rounded up to whole 64-byte cache lines.
    private let stride: Int
    typealias Block = UnsafeMutablePointer<Atomic<UInt64>>
    typealias Table = UnsafeMutablePointer<Atomic<Block?>>

    /// This instance's table once something was added, `Self.shared` (all empty) until then.
    private let blocks: Atomic<Table>

    /// The empty table every instance starts with; instances of more slots allocate their own.
    private static let sharedSlots = 1024
    nonisolated(unsafe) private static let shared: Table = newTable(sharedSlots)

    private static func newTable(_ slots: Int) -> Table {
        let table = Table.allocate(capacity: slots)
        for index in 0..<slots { (table + index).initialize(to: Atomic(nil)) }
        return table
    }

    public init(slots: Int, width: Int) {
        precondition(slots > 0 && width > 0)
        self.slots = slots
        self.width = width
        stride = (width + 7) / 8 * 8
        blocks = Atomic(slots <= Self.sharedSlots ? Self.shared : Self.newTable(slots))
    }

    deinit {
        let table = blocks.load(ordering: .acquiring)
        guard table != Self.shared else { return }
        for index in 0..<slots {
            if let block = table[index].load(ordering: .acquiring) {
                block.deinitialize(count: StripedCounter.stripes * stride)
                block.deallocate()
            }
        }
        table.deinitialize(count: slots)
        table.deallocate()
    }

    /// Whether this instance has a table of its own (something was added).
    public var hasTable: Bool { blocks.load(ordering: .acquiring) != Self.shared }

    /// Adds `delta` to counter `index` of block `slot`, on the calling thread's stripe.
    @inline(__always)
    public func add(_ delta: UInt64, slot: Int, index: Int) {
        let block = blocks.load(ordering: .acquiring)[slot].load(ordering: .acquiring) ?? allocate(slot)
        block[StripedCounter.stripe() * stride + index].wrappingAdd(delta, ordering: .relaxed)
    }

    /// Adds `first` to counter `firstIndex` and `second` to counter `secondIndex` of block `slot`:
    /// one load of the block and one stripe for both.
    @inline(__always)
    public func add(_ first: UInt64, at firstIndex: Int, _ second: UInt64, at secondIndex: Int, slot: Int) {
        let block = blocks.load(ordering: .acquiring)[slot].load(ordering: .acquiring) ?? allocate(slot)
        let base = StripedCounter.stripe() * stride
        block[base + firstIndex].wrappingAdd(first, ordering: .relaxed)
        block[base + secondIndex].wrappingAdd(second, ordering: .relaxed)
    }

    /// Whether block `slot` was ever added to.
    public func isAllocated(_ slot: Int) -> Bool { blocks.load(ordering: .acquiring)[slot].load(ordering: .acquiring) != nil }

    /// The totals of block `slot`'s counters (summed over stripes); nil when it was never added to.
    public func totals(_ slot: Int) -> [UInt64]? {
        guard let block = blocks.load(ordering: .acquiring)[slot].load(ordering: .acquiring) else { return nil }
        var totals = [UInt64](repeating: 0, count: width)
        for stripe in 0..<StripedCounter.stripes {
            for index in 0..<width { totals[index] &+= block[stripe * stride + index].load(ordering: .relaxed) }
        }
        return totals
    }

    /// This instance's own table, published the first time (a loser of the race frees its own).
    private func ownTable() -> Table {
        let current = blocks.load(ordering: .acquiring)
        if current != Self.shared { return current }
        let fresh = Self.newTable(slots)
        let (exchanged, existing) = blocks.compareExchange(
            expected: Self.shared, desired: fresh, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        if exchanged { return fresh }
        fresh.deinitialize(count: slots)
        fresh.deallocate()
        return existing
    }

    private func allocate(_ slot: Int) -> Block {
        let table = ownTable()
        let count = StripedCounter.stripes * stride
        let fresh = Block.allocate(capacity: count)
        for index in 0..<count { (fresh + index).initialize(to: Atomic(0)) }
        let (exchanged, existing) = table[slot].compareExchange(
            expected: nil, desired: fresh, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        if exchanged { return fresh }
        fresh.deinitialize(count: count)
        fresh.deallocate()
        return existing!
    }
}
