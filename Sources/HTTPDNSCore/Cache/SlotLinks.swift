/// Doubly-linked lists of cache slots, all threaded through one array of 32-bit links (8 bytes a
/// slot): what an eviction policy orders its slots with. A slot is in at most one list.
public struct SlotLinks: Sendable {
    /// The ends and length of one list.
    public struct List: Sendable {
        /// Newest (pushed last), -1 when empty.
        public fileprivate(set) var head: Int32 = -1
        /// Oldest, -1 when empty.
        public fileprivate(set) var tail: Int32 = -1
        public fileprivate(set) var count = 0

        public init() {}
    }

    private struct Link: Sendable {
        var previous: Int32
        var next: Int32
    }

    private var links: [Link] = []

    public init() {}

    /// Reserves room for `slots` slots.
    public mutating func reserve(_ slots: Int) {
        links.reserveCapacity(slots)
    }

    /// Makes `slot` the head of `list` (it must be in no list).
    public mutating func push(_ slot: Int32, onto list: inout List) {
        let index = Int(slot)
        let link = Link(previous: -1, next: list.head)
        if index == links.count { links.append(link) } else { links[index] = link }
        if list.head >= 0 { links[Int(list.head)].previous = slot }
        list.head = slot
        if list.tail < 0 { list.tail = slot }
        list.count += 1
    }

    /// Takes `slot` out of `list` (it must be in it).
    public mutating func unlink(_ slot: Int32, from list: inout List) {
        let link = links[Int(slot)]
        if link.previous >= 0 { links[Int(link.previous)].next = link.next } else { list.head = link.next }
        if link.next >= 0 { links[Int(link.next)].previous = link.previous } else { list.tail = link.previous }
        links[Int(slot)] = Link(previous: -1, next: -1)
        list.count -= 1
    }

    /// Makes `slot`, already in `list`, its head.
    public mutating func moveToHead(_ slot: Int32, in list: inout List) {
        guard slot != list.head else { return }
        unlink(slot, from: &list)
        push(slot, onto: &list)
    }

    /// Calls `body` with the slots of `list` from head to tail.
    public func forEach(in list: List, _ body: (Int32) -> Void) {
        var slot = list.head
        while slot >= 0 {
            let next = links[Int(slot)].next
            body(slot)
            slot = next
        }
    }

    public mutating func removeAll() {
        links.removeAll()
    }
}
