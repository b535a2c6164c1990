import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

@Suite struct LRUCacheTests {
    private func keys(_ cache: LRUCache<String, Int>) -> [String] { cache.entries.map(\.0) }

    @Test func setThenGetReturnsTheValue() {
        var cache = LRUCache<String, Int>(capacity: 3)
        cache.set(1, for: "a")
        cache.set(2, for: "b")
        #expect(cache.value(for: "a") == 1)
        #expect(cache.value(for: "b") == 2)
        #expect(cache.value(for: "c") == nil)
        #expect(cache.count == 2)
    }

    @Test func entriesRunFromMostToLeastRecentlyUsed() {
        var cache = LRUCache<String, Int>(capacity: 5)
        for (value, key) in ["a", "b", "c"].enumerated() { cache.set(value, for: key) }
        #expect(keys(cache) == ["c", "b", "a"])
        _ = cache.value(for: "a")
        #expect(keys(cache) == ["a", "c", "b"])
    }

    @Test func insertingBeyondCapacityEvictsTheLeastRecentlyUsed() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.set(1, for: "a")
        cache.set(2, for: "b")
        let evicted = cache.set(3, for: "c")
        #expect(evicted.map(\.0) == ["a"])
        #expect(evicted.map(\.1) == [1])
        #expect(keys(cache) == ["c", "b"])
    }

    @Test func getRefreshesRecency() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.set(1, for: "a")
        cache.set(2, for: "b")
        _ = cache.value(for: "a")
        #expect(cache.set(3, for: "c").map(\.0) == ["b"])
        #expect(cache.peek("a") == 1)
    }

    @Test func peekDoesNotRefreshRecency() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.set(1, for: "a")
        cache.set(2, for: "b")
        #expect(cache.peek("a") == 1)
        #expect(cache.set(3, for: "c").map(\.0) == ["a"])
    }

    @Test func settingAnExistingKeyReplacesTheValueAndRefreshesWithoutEvicting() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.set(1, for: "a")
        cache.set(2, for: "b")
        #expect(cache.set(10, for: "a").isEmpty)
        #expect(cache.count == 2)
        #expect(keys(cache) == ["a", "b"])
        #expect(cache.peek("a") == 10)
    }

    @Test func setOrUpdateChangesAPresentValueInPlaceWithoutAUseAndStoresAnAbsentOne() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.set(1, for: "a")
        cache.set(2, for: "b")
        // The update is given the stored value and the one passed (10).
        let updated = cache.setOrUpdate(10, for: "a", hash: "a".hashValue) { stored, given in stored += given * 10 }
        #expect(updated.isEmpty)
        #expect(cache.peek("a") == 101)
        #expect(keys(cache) == ["b", "a"])  // not counted as a use: a stays the oldest
        let evicted = cache.setOrUpdate(3, for: "c", hash: "c".hashValue) { _, _ in Issue.record("c is absent") }
        #expect(evicted.map(\.0) == ["a"])
        #expect(keys(cache) == ["c", "b"])
        #expect(cache.peek("c") == 3)
    }

    @Test func removeReturnsTheValueAndFreesTheSlot() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.set(1, for: "a")
        cache.set(2, for: "b")
        #expect(cache.removeValue(for: "a") == 1)
        #expect(cache.removeValue(for: "a") == nil)
        #expect(cache.count == 1)
        #expect(cache.set(3, for: "c").isEmpty)
        #expect(keys(cache) == ["c", "b"])
    }

    @Test func removingHeadTailAndMiddleKeepsTheOrder() {
        var cache = LRUCache<String, Int>(capacity: 5)
        for (value, key) in ["a", "b", "c", "d", "e"].enumerated() { cache.set(value, for: key) }
        cache.removeValue(for: "c")  // middle
        #expect(keys(cache) == ["e", "d", "b", "a"])
        cache.removeValue(for: "e")  // head
        #expect(keys(cache) == ["d", "b", "a"])
        cache.removeValue(for: "a")  // tail
        #expect(keys(cache) == ["d", "b"])
        #expect(cache.set(9, for: "x").isEmpty)
        #expect(keys(cache) == ["x", "d", "b"])
    }

    @Test func shrinkingCapacityEvictsLeastRecentlyUsedFirst() {
        var cache = LRUCache<String, Int>(capacity: 4)
        for (value, key) in ["a", "b", "c", "d"].enumerated() { cache.set(value, for: key) }
        _ = cache.value(for: "a")
        let evicted = cache.setCapacity(2)
        #expect(evicted.map(\.0) == ["b", "c"])
        #expect(keys(cache) == ["a", "d"])
        #expect(cache.capacity == 2)
        #expect(cache.set(5, for: "e").map(\.0) == ["d"])
    }

    @Test func growingCapacityEvictsNothingAndAdmitsMore() {
        var cache = LRUCache<String, Int>(capacity: 1)
        cache.set(1, for: "a")
        #expect(cache.setCapacity(3).isEmpty)
        cache.set(2, for: "b")
        cache.set(3, for: "c")
        #expect(cache.count == 3)
        #expect(keys(cache) == ["c", "b", "a"])
    }

    @Test func removeAllEmptiesAndTheCacheStaysUsable() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.set(1, for: "a")
        cache.set(2, for: "b")
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.entries.isEmpty)
        #expect(cache.value(for: "a") == nil)
        cache.set(3, for: "c")
        cache.set(4, for: "d")
        #expect(cache.set(5, for: "e").map(\.0) == ["c"])
        #expect(keys(cache) == ["e", "d"])
    }

    @Test func capacityOfOneKeepsOnlyTheLatest() {
        var cache = LRUCache<String, Int>(capacity: 1)
        cache.set(1, for: "a")
        #expect(cache.set(2, for: "b").map(\.0) == ["a"])
        #expect(cache.value(for: "b") == 2)
        #expect(keys(cache) == ["b"])
    }

    /// Random operations checked against a plain array model (most recent first).
    @Test func randomOperationsMatchASimpleModel() {
        var generator = SplitMix64(seed: 42)
        var cache = LRUCache<Int, Int>(capacity: 8)
        var model: [(Int, Int)] = []
        var capacity = 8
        for step in 0..<20_000 {
            let key = Int(generator.next() % 20)
            switch generator.next() % 10 {
            case 0...3:
                let evicted = cache.set(step, for: key)
                var expectedEvicted: [Int] = []
                if let index = model.firstIndex(where: { $0.0 == key }) {
                    model.remove(at: index)
                } else {
                    while model.count >= capacity { expectedEvicted.append(model.removeLast().0) }
                }
                model.insert((key, step), at: 0)
                if evicted.map(\.0) != expectedEvicted {
                    Issue.record("step \(step): set evicted \(evicted.map(\.0)), model \(expectedEvicted)")
                }
            case 4...5:
                let value = cache.value(for: key)
                var expected: Int?
                if let index = model.firstIndex(where: { $0.0 == key }) {
                    let entry = model.remove(at: index)
                    model.insert(entry, at: 0)
                    expected = entry.1
                }
                if value != expected {
                    Issue.record("step \(step): get \(key) gave \(String(describing: value)), model \(String(describing: expected))")
                }
            case 6...7:
                let value = cache.removeValue(for: key)
                var expected: Int?
                if let index = model.firstIndex(where: { $0.0 == key }) { expected = model.remove(at: index).1 }
                if value != expected {
                    Issue.record("step \(step): remove \(key) gave \(String(describing: value)), model \(String(describing: expected))")
                }
            case 8:
                capacity = Int(generator.next() % 12) + 1
                let evicted = cache.setCapacity(capacity).map(\.0)
                var expectedEvicted: [Int] = []
                while model.count > capacity { expectedEvicted.append(model.removeLast().0) }
                if evicted != expectedEvicted { Issue.record("step \(step): resize evicted \(evicted), model \(expectedEvicted)") }
            default:
                if Int(generator.next() % 50) == 0 {
                    cache.removeAll()
                    model.removeAll()
                }
            }
            if cache.entries.map(\.0) != model.map(\.0) || cache.entries.map(\.1) != model.map(\.1) {
                Issue.record("step \(step): cache \(cache.entries.map(\.0)) != model \(model.map(\.0))")
                return
            }
        }
        #expect(cache.count == model.count)
    }
}

/// Keys whose hashes collide in groups, so that the index's probing and backward-shift deletion
/// are exercised on long runs of occupied buckets.
struct CollidingKey: BoundedCacheKey {
    let id: Int

    static func == (lhs: CollidingKey, rhs: CollidingKey) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id % 7) }
}

@Suite struct LRUCacheIndexTests {
    @Test func collidingKeysStayFindableThroughInsertionsEvictionsAndRemovals() {
        var generator = SplitMix64(seed: 7)
        var cache = LRUCache<CollidingKey, Int>(capacity: 150)
        var model: [Int: Int] = [:]  // id -> value; recency is checked by the other test
        for step in 0..<30_000 {
            let id = Int(generator.next() % 300)
            if generator.next() % 3 == 0 {
                #expect(cache.removeValue(for: CollidingKey(id: id)) == model.removeValue(forKey: id))
            } else {
                for (key, _) in cache.set(step, for: CollidingKey(id: id)) { model.removeValue(forKey: key.id) }
                model[id] = step
            }
            if step % 997 == 0 {
                for probe in 0..<300 where cache.peek(CollidingKey(id: probe)) != model[probe] {
                    Issue.record(
                        "step \(step): key \(probe) gives \(String(describing: cache.peek(CollidingKey(id: probe)))), model \(String(describing: model[probe]))"
                    )
                    return
                }
            }
        }
        #expect(cache.count == model.count)
        #expect(cache.count <= 150)
    }
}
