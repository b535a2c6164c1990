/// A first-in, first-out queue: an array and the index of its head (O(1) amortised both ends).
struct FIFO<Element> {
    private var items: [Element] = []
    private var head = 0

    var first: Element? { head < items.count ? items[head] : nil }
    var count: Int { items.count - head }
    var isEmpty: Bool { head == items.count }

    mutating func append(_ item: Element) { items.append(item) }

    mutating func removeFirst() {
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
    }
}
