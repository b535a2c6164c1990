/// The HTTP/1.1 client's transfers ordered by deadline (a binary min-heap). A transfer that ends
/// before its deadline stays in until it reaches the top, where ``dropFinished()`` removes it:
/// with one timeout for every request, transfers end roughly in the order they started, so the
/// heap holds little more than the transfers in flight.
struct HTTP1DeadlineHeap {
    private var items: [HTTP1Transfer] = []

    var isEmpty: Bool { items.isEmpty }

    /// The earliest deadline of a transfer still running (after ``dropFinished()``).
    var earliest: Int64? { items.first?.deadline }

    mutating func insert(_ transfer: HTTP1Transfer) {
        items.append(transfer)
        var child = items.count - 1
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
