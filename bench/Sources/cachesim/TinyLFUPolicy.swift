import HTTPDNSCore

/// W-TinyLFU (Einziger, Friedman, Manes; Caffeine's policy), for comparison in the simulator: a
/// window LRU of 1% of the capacity in front of a segmented LRU (probation 20%, protected 80%),
/// and a count-min sketch of recent use frequencies that decides, when the window's oldest entry
/// must leave, whether it may take the place of main's victim. Aging halves the sketch every
/// 10 × capacity recorded uses. Without Caffeine's hill climbing of the window size or its
/// doorkeeper: a fixed 1% window, as in the paper's default.
///
/// A hit records the use in the sketch (four counters) and moves the entry to the head of its
/// segment (a list move under the shard lock, which is what S3-FIFO avoids).
/// Memory: links (8 bytes a slot), a segment byte and the key's hash (8 bytes) per slot, and the
/// sketch (4 bytes per entry of capacity).
struct TinyLFUPolicy: EvictionPolicy {
    private var links = SlotLinks()
    private var window = SlotLinks.List()
    private var probation = SlotLinks.List()
    private var protected = SlotLinks.List()
    private var segments: [UInt8] = []
    private var hashes: [Int] = []
    private var sketch: FrequencySketch
    private var capacity: Int

    private static let inWindow: UInt8 = 0
    private static let inProbation: UInt8 = 1
    private static let inProtected: UInt8 = 2

    init(capacity: Int) {
        self.capacity = capacity
        sketch = FrequencySketch(capacity: capacity)
    }

    private var windowTarget: Int { max(1, capacity / 100) }
    private var mainTarget: Int { max(0, capacity - windowTarget) }
    private var protectedTarget: Int { mainTarget * 4 / 5 }

    mutating func setCapacity(_ capacity: Int) {
        self.capacity = capacity
        sketch = FrequencySketch(capacity: capacity)
    }

    mutating func reserveSlots(_ slots: Int) {
        links.reserve(slots)
        segments.reserveCapacity(slots)
        hashes.reserveCapacity(slots)
    }

    mutating func inserted(_ slot: Int32, hash: Int) {
        sketch.record(hash)
        if Int(slot) == segments.count {
            segments.append(Self.inWindow)
            hashes.append(hash)
        } else {
            segments[Int(slot)] = Self.inWindow
            hashes[Int(slot)] = hash
        }
        links.push(slot, onto: &window)
    }

    mutating func accessed(_ slot: Int32, hash: Int) {
        sketch.record(hash)
        switch segments[Int(slot)] {
        case Self.inWindow:
            links.moveToHead(slot, in: &window)
        case Self.inProbation:
            links.unlink(slot, from: &probation)
            segments[Int(slot)] = Self.inProtected
            links.push(slot, onto: &protected)
            if protected.count > protectedTarget {
                let demoted = protected.tail
                links.unlink(demoted, from: &protected)
                segments[Int(demoted)] = Self.inProbation
                links.push(demoted, onto: &probation)
            }
        default:
            links.moveToHead(slot, in: &protected)
        }
    }

    mutating func removed(_ slot: Int32) {
        switch segments[Int(slot)] {
        case Self.inWindow: links.unlink(slot, from: &window)
        case Self.inProbation: links.unlink(slot, from: &probation)
        default: links.unlink(slot, from: &protected)
        }
    }

    mutating func evict() -> Int32? {
        // While main has room, the window's overflow moves there without a contest.
        while window.count > windowTarget && probation.count + protected.count < mainTarget {
            let moved = window.tail
            links.unlink(moved, from: &window)
            segments[Int(moved)] = Self.inProbation
            links.push(moved, onto: &probation)
        }
        if window.count > windowTarget {
            let victim = probation.count > 0 ? probation.tail : protected.tail
            if victim >= 0 {
                let candidate = window.tail
                links.unlink(candidate, from: &window)
                if sketch.frequency(hashes[Int(candidate)]) > sketch.frequency(hashes[Int(victim)]) {
                    removed(victim)
                    segments[Int(candidate)] = Self.inProbation
                    links.push(candidate, onto: &probation)
                    return victim
                }
                return candidate
            }
        }
        for list in [probation, protected, window] where list.tail >= 0 {
            let slot = list.tail
            removed(slot)
            return slot
        }
        return nil
    }

    mutating func removeAll() {
        links.removeAll()
        window = SlotLinks.List()
        probation = SlotLinks.List()
        protected = SlotLinks.List()
        segments.removeAll()
        hashes.removeAll()
        sketch = FrequencySketch(capacity: capacity)
    }

    func forEach(_ body: (Int32) -> Void) {
        links.forEach(in: protected, body)
        links.forEach(in: probation, body)
        links.forEach(in: window, body)
    }
}

/// A count-min sketch of 4 rows of saturating 4-bit counts (kept in bytes), halved every
/// 10 × capacity additions so that old popularity fades.
struct FrequencySketch {
    private var counts: [UInt8]
    private let rowShift: Int
    private var additions = 0
    private let sampleSize: Int

    init(capacity: Int) {
        var width = 16
        while width < capacity { width <<= 1 }
        counts = [UInt8](repeating: 0, count: width * 4)
        rowShift = width.trailingZeroBitCount
        sampleSize = max(10 * capacity, 16)
    }

    private static let seeds: [UInt64] = [0x9E37_79B9_7F4A_7C15, 0xC2B2_AE3D_27D4_EB4F, 0x1656_67B1_9E37_79F9, 0x27D4_EB2F_1656_67C5]

    private func index(_ hash: Int, row: Int) -> Int {
        let mixed = (UInt64(bitPattern: Int64(hash)) ^ Self.seeds[row]) &* Self.seeds[(row + 1) & 3]
        return (row << rowShift) + Int(truncatingIfNeeded: mixed >> UInt64(64 - rowShift))
    }

    mutating func record(_ hash: Int) {
        for row in 0..<4 {
            let at = index(hash, row: row)
            if counts[at] < 15 { counts[at] += 1 }
        }
        additions += 1
        if additions >= sampleSize {
            for at in counts.indices { counts[at] >>= 1 }
            additions /= 2
        }
    }

    func frequency(_ hash: Int) -> UInt8 {
        var least: UInt8 = 15
        for row in 0..<4 { least = min(least, counts[index(hash, row: row)]) }
        return least
    }
}
