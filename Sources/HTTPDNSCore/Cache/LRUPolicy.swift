/// Least recently used: one recency list; a hit moves its entry to the front (two link updates
/// and the neighbours' links), the tail is evicted. 8 bytes a slot.
public struct LRUPolicy: EvictionPolicy, Sendable {
    private var links = SlotLinks()
    private var list = SlotLinks.List()

    public init(capacity: Int) {}

    public mutating func setCapacity(_ capacity: Int) {}

    public mutating func reserveSlots(_ slots: Int) { links.reserve(slots) }

    public mutating func inserted(_ slot: Int32, hash: Int) { links.push(slot, onto: &list) }

    public mutating func accessed(_ slot: Int32, hash: Int) { links.moveToHead(slot, in: &list) }

    public mutating func removed(_ slot: Int32) { links.unlink(slot, from: &list) }

    public mutating func evict() -> Int32? {
        let slot = list.tail
        guard slot >= 0 else { return nil }
        links.unlink(slot, from: &list)
        return slot
    }

    public mutating func removeAll() {
        links.removeAll()
        list = SlotLinks.List()
    }

    /// Most to least recently used.
    public func forEach(_ body: (Int32) -> Void) { links.forEach(in: list, body) }
}
