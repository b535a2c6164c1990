/// A bounded map that evicts the least recently used key. A value type with no lock: the owner
/// guards it. Nodes live in one array linked by indices, so an entry costs no allocation of its
/// own once the array has grown.
public struct LRUCache<Key: Hashable, Value> {
    fileprivate struct Node {
        var key: Key
        var value: Value
        var previous: Int
        var next: Int
    }

    public private(set) var capacity: Int
    private var index: [Key: Int] = [:]
    private var nodes: [Node?] = []
    private var free: [Int] = []
    /// Most recently used.
    private var head = -1
    /// Least recently used.
    private var tail = -1

    public init(capacity: Int) {
        precondition(capacity >= 0, "an LRU cache cannot hold a negative number of entries")
        self.capacity = capacity
    }

    public var count: Int { index.count }

    /// The value for `key`, marking it most recently used.
    public mutating func value(for key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        moveToFront(slot)
        return nodes[slot]!.value
    }

    /// Runs `body` on the stored value for `key` in place, marking it most recently used when
    /// `touch` is true. Nil when the key is absent.
    public mutating func withValue<R>(for key: Key, touch: Bool, _ body: (inout Value) -> R) -> R? {
        guard let slot = index[key] else { return nil }
        if touch { moveToFront(slot) }
        return body(&nodes[slot]!.value)
    }

    /// The value for `key` without touching its recency.
    public func peek(_ key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        return nodes[slot]!.value
    }

    /// Stores `value` as most recently used and returns the entries evicted to make room.
    @discardableResult
    public mutating func set(_ value: Value, for key: Key) -> [(Key, Value)] {
        if let slot = index[key] {
            nodes[slot]!.value = value
            moveToFront(slot)
            return []
        }
        // A cache of capacity 0 (a shard whose share of a small limit is nothing) stores nothing.
        guard capacity > 0 else { return [(key, value)] }
        var evicted: [(Key, Value)] = []
        while index.count >= capacity, let removed = removeLeastRecent() { evicted.append(removed) }
        let node = Node(key: key, value: value, previous: -1, next: head)
        let slot: Int
        if let reused = free.popLast() {
            nodes[reused] = node
            slot = reused
        } else {
            nodes.append(node)
            slot = nodes.count - 1
        }
        if head >= 0 { nodes[head]!.previous = slot }
        head = slot
        if tail < 0 { tail = slot }
        index[key] = slot
        return evicted
    }

    @discardableResult
    public mutating func removeValue(for key: Key) -> Value? {
        guard let slot = index.removeValue(forKey: key) else { return nil }
        unlink(slot)
        let value = nodes[slot]!.value
        nodes[slot] = nil
        free.append(slot)
        return value
    }

    public mutating func removeAll() {
        index.removeAll()
        nodes.removeAll()
        free.removeAll()
        head = -1
        tail = -1
    }

    /// Changes the bound; evicts least recently used entries beyond it and returns them.
    public mutating func setCapacity(_ newCapacity: Int) -> [(Key, Value)] {
        precondition(newCapacity >= 0, "an LRU cache cannot hold a negative number of entries")
        capacity = newCapacity
        var evicted: [(Key, Value)] = []
        while index.count > capacity, let removed = removeLeastRecent() { evicted.append(removed) }
        return evicted
    }

    /// Keys and values from most to least recently used.
    public var entries: [(Key, Value)] {
        var result: [(Key, Value)] = []
        result.reserveCapacity(index.count)
        var slot = head
        while slot >= 0, let node = nodes[slot] {
            result.append((node.key, node.value))
            slot = node.next
        }
        return result
    }

    private mutating func removeLeastRecent() -> (Key, Value)? {
        guard tail >= 0, let node = nodes[tail] else { return nil }
        removeValue(for: node.key)
        return (node.key, node.value)
    }

    private mutating func moveToFront(_ slot: Int) {
        guard slot != head else { return }
        unlink(slot)
        nodes[slot]!.previous = -1
        nodes[slot]!.next = head
        if head >= 0 { nodes[head]!.previous = slot }
        head = slot
        if tail < 0 { tail = slot }
    }

    private mutating func unlink(_ slot: Int) {
        let previous = nodes[slot]!.previous
        let next = nodes[slot]!.next
        if previous >= 0 { nodes[previous]!.next = next } else if head == slot { head = next }
        if next >= 0 { nodes[next]!.previous = previous } else if tail == slot { tail = previous }
        nodes[slot]!.previous = -1
        nodes[slot]!.next = -1
    }
}

extension LRUCache: Sendable where Key: Sendable, Value: Sendable {}
extension LRUCache.Node: Sendable where Key: Sendable, Value: Sendable {}
