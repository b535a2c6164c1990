/// A bounded table of client token buckets keyed by a 64-bit hash of a client (and, for the
/// request rate, its account): open addressing over a fixed array, each key probed in a window of
/// `probeWindow` slots. A value with no lock: `ClientRateLimiter` keeps one per stripe behind a
/// `Mutex`, and `FairBudget` one per account for the clients' shares of its upstream budget.
///
/// Memory never grows: a new client takes an empty slot in its window, else a slot whose bucket
/// is full (its client has been idle long enough to have every token back, so forgetting it
/// changes no decision), else the slot nearest to full (an address flood can then hand an
/// evicted client a fresh burst early; it cannot make the table grow). Taking a token allocates
/// nothing.
package struct ClientBucketTable {
    struct Slot {
        /// 0 marks an empty slot (keys are never 0: their makers map 0 to 1).
        var key: UInt64 = 0
        var bucket = TokenBucket()
    }

    package static let probeWindow = 8
    private var slots: [Slot]
    private let mask: Int
    /// Clients forgotten while their bucket was not yet full (the table was too small for them).
    package private(set) var evictedEarly: UInt64 = 0

    /// `capacity` is rounded up to a power of two, at least `probeWindow`.
    package init(capacity: Int) {
        var size = Self.probeWindow
        while size < capacity { size <<= 1 }
        slots = Array(repeating: Slot(), count: size)
        mask = size - 1
    }

    package var capacity: Int { slots.count }

    /// Takes a token from the bucket of `key` (non-zero) at `now`, creating the bucket full.
    package mutating func take(_ key: UInt64, at now: Timestamp, rate: Double, burst: Double) -> TokenBucket.Decision {
        let home = Int(truncatingIfNeeded: key) & mask
        var free = -1
        var nearest = home
        for step in 0..<Self.probeWindow {
            let index = (home + step) & mask
            let slot = slots[index]
            if slot.key == key { return slots[index].bucket.take(at: now, rate: rate, burst: burst) }
            if free < 0 {
                if slot.key == 0 || slot.bucket.isFull(at: now) {
                    free = index
                } else if slot.bucket.fullAt < slots[nearest].bucket.fullAt {
                    nearest = index
                }
            }
        }
        if free < 0 {
            free = nearest
            evictedEarly &+= 1
        }
        slots[free] = Slot(key: key, bucket: TokenBucket())
        return slots[free].bucket.take(at: now, rate: rate, burst: burst)
    }

    /// Gives back one token to the bucket of `key`, if the table still has it.
    package mutating func refund(_ key: UInt64, at now: Timestamp, rate: Double) {
        let home = Int(truncatingIfNeeded: key) & mask
        for step in 0..<Self.probeWindow where slots[(home + step) & mask].key == key {
            slots[(home + step) & mask].bucket.refund(at: now, rate: rate)
            return
        }
    }

    /// Slots holding a client whose bucket is not full at `now`.
    package func activeCount(at now: Timestamp) -> Int {
        slots.reduce(0) { $0 + ($1.key != 0 && !$1.bucket.isFull(at: now) ? 1 : 0) }
    }

    /// True when the table holds `key` with a bucket not full at `now` (it counts in `activeCount`).
    package func isActive(_ key: UInt64, at now: Timestamp) -> Bool {
        let home = Int(truncatingIfNeeded: key) & mask
        for step in 0..<Self.probeWindow where slots[(home + step) & mask].key == key {
            return !slots[(home + step) & mask].bucket.isFull(at: now)
        }
        return false
    }
}
