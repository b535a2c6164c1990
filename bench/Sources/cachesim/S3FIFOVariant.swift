import HTTPDNSCore

/// Experiment knobs for `S3FIFOVariant` (set before a replay).
struct VariantConfig {
    var smallPercent = 10
    /// Ghost buckets per entry of capacity, in percent.
    var ghostPercent = 100
    /// A key the ghost remembers enters main only if the sketch counts it more often than main's
    /// next victim (TinyLFU's contest); otherwise it enters the small queue like a new key.
    var guardGhost = false
    /// A used entry leaving the small queue enters main only if it wins the same contest.
    var guardPromotion = false
}
nonisolated(unsafe) var variantConfig = VariantConfig()

/// S3-FIFO as `S3FIFOPolicy`, with the knobs above and an optional TinyLFU admission contest.
struct S3FIFOVariant: EvictionPolicy {
    private var links = SlotLinks()
    private var small = SlotLinks.List()
    private var main = SlotLinks.List()
    private var marks: [UInt8] = []
    private var fingerprints: [UInt32] = []
    private var ghost: [UInt32] = []
    private var capacity: Int
    private var evictingFromSmall = false
    private var admittingToMain = false
    private var sketch: FrequencySketch?
    private let config = variantConfig

    init(capacity: Int) { self.capacity = capacity }

    private var smallTarget: Int { max(1, capacity * config.smallPercent / 100) }

    mutating func setCapacity(_ capacity: Int) { self.capacity = capacity; ghost = [] }

    mutating func reserveSlots(_ slots: Int) {
        links.reserve(slots)
        marks.reserveCapacity(slots)
    }

    private var guarded: Bool { config.guardGhost || config.guardPromotion }

    private static func fp(_ hash: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: (UInt64(bitPattern: Int64(hash)) &* 0x9E37_79B9_7F4A_7C15) >> 32) | 1
    }

    mutating func admitting(hash: Int) {
        admittingToMain = false
        if guarded, sketch != nil { sketch!.record(Int(Self.fp(hash))) }
        guard !ghost.isEmpty else { return }
        let fingerprint = Self.fp(hash)
        let bucket = ghostBucket(fingerprint)
        if ghost[bucket] == fingerprint {
            ghost[bucket] = 0
            if config.guardGhost, let sketch, main.tail >= 0 {
                admittingToMain = sketch.frequency(Int(fingerprint)) > sketch.frequency(Int(fingerprints[Int(main.tail)]))
            } else {
                admittingToMain = true
            }
        }
    }

    mutating func inserted(_ slot: Int32, hash: Int) {
        let toMain = admittingToMain
        admittingToMain = false
        let mark: UInt8 = toMain ? 4 : 0
        if Int(slot) == marks.count { marks.append(mark) } else { marks[Int(slot)] = mark }
        if guarded {
            if Int(slot) == fingerprints.count { fingerprints.append(Self.fp(hash)) } else { fingerprints[Int(slot)] = Self.fp(hash) }
        }
        if toMain { links.push(slot, onto: &main) } else { links.push(slot, onto: &small) }
    }

    mutating func accessed(_ slot: Int32, hash: Int) {
        let mark = marks[Int(slot)]
        if mark & 3 != 3 { marks[Int(slot)] = mark + 1 }
        if guarded, sketch != nil { sketch!.record(Int(fingerprints[Int(slot)])) }
    }

    mutating func removed(_ slot: Int32) {
        if marks[Int(slot)] & 4 != 0 { links.unlink(slot, from: &main) } else { links.unlink(slot, from: &small) }
    }

    mutating func evict() -> Int32? {
        if guarded, sketch == nil { sketch = FrequencySketch(capacity: capacity) }
        while true {
            if small.count > 0 && (small.count >= smallTarget || main.count == 0) {
                let slot = small.tail
                links.unlink(slot, from: &small)
                let mark = marks[Int(slot)]
                if mark & 3 >= 1 {
                    var promote = true
                    if config.guardPromotion, let sketch, main.tail >= 0 {
                        promote = sketch.frequency(Int(fingerprints[Int(slot)])) >= sketch.frequency(Int(fingerprints[Int(main.tail)]))
                    }
                    if promote {
                        marks[Int(slot)] = mark | 4
                        links.push(slot, onto: &main)
                        continue
                    }
                }
                evictingFromSmall = true
                return slot
            }
            let slot = main.tail
            guard slot >= 0 else { return nil }
            let mark = marks[Int(slot)]
            if mark & 3 > 0 {
                marks[Int(slot)] = mark - 1
                links.moveToHead(slot, in: &main)
                continue
            }
            links.unlink(slot, from: &main)
            evictingFromSmall = false
            return slot
        }
    }

    mutating func evicted(_ slot: Int32, hash: Int) {
        guard evictingFromSmall, capacity > 0 else { return }
        let size = capacity * config.ghostPercent / 100
        guard size > 0 else { return }
        if ghost.isEmpty { ghost = [UInt32](repeating: 0, count: size) }
        let fingerprint = Self.fp(hash)
        ghost[ghostBucket(fingerprint)] = fingerprint
    }

    mutating func removeAll() {
        links.removeAll(); small = SlotLinks.List(); main = SlotLinks.List(); marks.removeAll(); fingerprints.removeAll(); ghost = [];
        sketch = nil
    }

    func forEach(_ body: (Int32) -> Void) {
        links.forEach(in: main, body)
        links.forEach(in: small, body)
    }

    private func ghostBucket(_ fingerprint: UInt32) -> Int {
        Int(truncatingIfNeeded: (UInt64(fingerprint) &* UInt64(ghost.count)) >> 32)
    }
}
