/// S3-FIFO (Yang et al., SOSP 2023): a small probationary FIFO, a main FIFO and a ghost of keys
/// recently evicted from the small one.
///
/// A new key enters the small queue (a key the ghost remembers enters main at once). A hit only
/// raises the entry's 2-bit use count, which is the whole of the hit path's bookkeeping: no list
/// moves. When the cache is full and the small queue holds at least a twentieth of it, its oldest
/// entry leaves: to main if it was used since it came in, otherwise out of the cache (into the
/// ghost). Otherwise main's oldest entry leaves if its count is 0, or goes back to main's head
/// with its count lowered by one (which is how a formerly hot entry ages out). One-hit wonders,
/// scans and floods of never-repeated names thus pass through the small queue and never
/// displace what main holds.
///
/// Memory: the links (8 bytes a slot, as for LRU), a byte of marks per slot, and the ghost: one
/// 32-bit fingerprint per two entries of capacity, allocated at the first eviction (a cache that
/// never fills never pays for it): 3 bytes an entry over LRU.
///
/// Sizes, from `bench/cachesim --experiment` (1M names, cache of 1%): the paper's small queue of
/// a tenth and ghost as large as the cache let a scan that repeats every period come back into
/// main through the ghost (2 × C scans: 63.0 %, against 66.6 % with the sizes below); a small
/// queue of a twentieth and a ghost of half the capacity are at least as good on every other
/// workload (plain Zipf +0.3 to +0.8 points). A TinyLFU contest at the ghost's re-admission
/// (a frequency sketch) added nothing beyond the smaller ghost.
public struct S3FIFOPolicy: EvictionPolicy, Sendable {
    private var links = SlotLinks()
    private var small = SlotLinks.List()
    private var main = SlotLinks.List()
    /// Per slot: the use count in `countMask`, `inMain` when the slot is in main.
    private var marks: [UInt8] = []
    /// Fingerprints of keys evicted from the small queue, by bucket (`ghostBucket`); 0 is empty.
    /// A newer key that lands in the same bucket replaces an older one, so it forgets keys at
    /// about the rate it learns them, like the paper's FIFO ghost, with no list to keep.
    private var ghost: [UInt32] = []
    private var capacity: Int
    /// Whether the last entry `evict` chose came from the small queue (it goes into the ghost).
    private var evictingFromSmall = false
    /// Whether the key being admitted was in the ghost (looked up before the evictions made
    /// for it, which could overwrite its bucket).
    private var admittingToMain = false

    private static let countMask: UInt8 = 0b11
    private static let inMain: UInt8 = 0b100
    /// Uses (hits after it came in) an entry needs in the small queue to be moved to main.
    static let promotionUses: UInt8 = 1

    public init(capacity: Int) { self.capacity = capacity }

    /// The small queue's share: a twentieth of the capacity, at least one entry.
    private var smallTarget: Int { max(1, capacity / 20) }

    /// Buckets of the ghost: half the capacity, at least one.
    private var ghostSize: Int { max(1, capacity / 2) }

    /// A new limit forgets the ghost (sized for the old one); the same limit (an account's
    /// configuration updated otherwise) keeps it.
    public mutating func setCapacity(_ capacity: Int) {
        guard capacity != self.capacity else { return }
        self.capacity = capacity
        ghost = []
    }

    public mutating func reserveSlots(_ slots: Int) {
        links.reserve(slots)
        marks.reserveCapacity(slots)
    }

    public mutating func admitting(hash: Int) {
        admittingToMain = false
        guard !ghost.isEmpty else { return }
        let fingerprint = Self.ghostFingerprint(hash)
        let bucket = ghostBucket(fingerprint)
        if ghost[bucket] == fingerprint {
            ghost[bucket] = 0
            admittingToMain = true
        }
    }

    public mutating func inserted(_ slot: Int32, hash: Int) {
        let toMain = admittingToMain
        admittingToMain = false
        let mark = toMain ? Self.inMain : 0
        if Int(slot) == marks.count { marks.append(mark) } else { marks[Int(slot)] = mark }
        if toMain { links.push(slot, onto: &main) } else { links.push(slot, onto: &small) }
    }

    @inline(__always)
    public mutating func accessed(_ slot: Int32, hash: Int) {
        let mark = marks[Int(slot)]
        if mark & Self.countMask != Self.countMask { marks[Int(slot)] = mark + 1 }
    }

    public mutating func removed(_ slot: Int32) {
        if marks[Int(slot)] & Self.inMain != 0 { links.unlink(slot, from: &main) } else { links.unlink(slot, from: &small) }
    }

    public mutating func evict() -> Int32? {
        while true {
            if small.count > 0 && (small.count >= smallTarget || main.count == 0) {
                let slot = small.tail
                links.unlink(slot, from: &small)
                let mark = marks[Int(slot)]
                if mark & Self.countMask >= Self.promotionUses {
                    marks[Int(slot)] = mark | Self.inMain
                    links.push(slot, onto: &main)
                    continue
                }
                evictingFromSmall = true
                return slot
            }
            let slot = main.tail
            guard slot >= 0 else { return nil }
            let mark = marks[Int(slot)]
            if mark & Self.countMask > 0 {
                marks[Int(slot)] = mark - 1
                links.moveToHead(slot, in: &main)
                continue
            }
            links.unlink(slot, from: &main)
            evictingFromSmall = false
            return slot
        }
    }

    public mutating func evicted(_ slot: Int32, hash: Int) {
        guard evictingFromSmall, capacity > 0 else { return }
        if ghost.isEmpty { ghost = [UInt32](repeating: 0, count: ghostSize) }
        let fingerprint = Self.ghostFingerprint(hash)
        ghost[ghostBucket(fingerprint)] = fingerprint
    }

    public mutating func removeAll() {
        links.removeAll()
        small = SlotLinks.List()
        main = SlotLinks.List()
        marks.removeAll()
        ghost = []
    }

    /// Main from newest to oldest, then the small queue likewise.
    public func forEach(_ body: (Int32) -> Void) {
        links.forEach(in: main, body)
        links.forEach(in: small, body)
    }

    /// A key's fingerprint in the ghost, never 0 (the empty bucket).
    private static func ghostFingerprint(_ hash: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: cacheFingerprint(hash)) | 1
    }

    private func ghostBucket(_ fingerprint: UInt32) -> Int {
        Int(truncatingIfNeeded: (UInt64(fingerprint) &* UInt64(ghost.count)) >> 32)
    }
}
