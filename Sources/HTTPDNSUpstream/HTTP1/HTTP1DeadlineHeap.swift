/// The HTTP/1.1 client's transfers ordered by deadline (a binary min-heap). A transfer that ends
/// before its deadline stays in until it reaches the top, where ``dropFinished()`` removes it
/// (with one timeout for every request, transfers end roughly in the order they started, so the
/// heap holds little more than the transfers in flight), or until a sweep.
struct HTTP1DeadlineHeap {
    private var items: [HTTP1Transfer] = []
    /// At this size finished transfers are swept out of the whole heap: with timeouts of different
    /// lengths, one that ended early could otherwise stay in for as long as its timeout.
    private var sweepAt = 1024

    var isEmpty: Bool { items.isEmpty }

    /// Transfers held, finished ones not yet removed included.
    var count: Int { items.count }

    /// The earliest deadline of a transfer still running (after ``dropFinished()``).
    var earliest: Int64? { items.first?.deadline }

    mutating func insert(_ transfer: HTTP1Transfer) {
        if items.count >= sweepAt { sweep() }
        items.append(transfer)
        siftUp(items.count - 1)
    }

    /// Removes every finished transfer and restores the heap order; the next sweep comes when
    /// the heap has doubled, so sweeping costs O(1) per insert over time.
    private mutating func sweep() {
        items.removeAll { $0.isDone }
        for index in items.indices { siftUp(index) }
        sweepAt = max(1024, 2 * items.count)
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].deadline < items[parent].deadline else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes finished transfers from the top.
    mutating func dropFinished() {
        while let first = items.first, first.isDone { removeFirst() }
    }

    /// The first transfer whose deadline is at or before `now`, removed; nil when none is due.
    mutating func popExpired(now: Int64) -> HTTP1Transfer? {
        dropFinished()
        guard let first = items.first, first.deadline <= now else { return nil }
        removeFirst()
        return first
    }

    mutating func removeAll() {
        items.removeAll()
    }

    private mutating func removeFirst() {
        let last = items.removeLast()
        guard !items.isEmpty else { return }
        items[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count && items[left].deadline < items[smallest].deadline { smallest = left }
            if right < items.count && items[right].deadline < items[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
