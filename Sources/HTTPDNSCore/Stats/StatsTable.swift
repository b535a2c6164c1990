/// The statistics records of one account: a map from `StatsKey` to `DomainStats` that never
/// removes a key and holds at most `limit` of them. A value type with no lock: `StatsRecorder`
/// guards it.
///
/// Every resolved name gets a record, so this map is as long as the cache (up to its limit), and
/// its layout is chosen for memory:
/// - keys and records live in two parallel arrays that grow by half (never past `limit`), not by
///   doubling;
/// - a key keeps the domain `String` (the same storage as the cache key's host), the family, and
///   the client network as a number into a table of the networks seen (the account's networks
///   are few next to its names, and keys are never removed, so that table only grows with them);
/// - a record keeps its counters in 32 bits (`PackedStats`, 72 bytes instead of 112); the rare
///   record with a counter past 2^32 − 1 moves to a side table of full records;
/// - the index is an open-addressing table (linear probing; no deletion) whose entries hold a
///   slot number and the key's fingerprint, the top 32 bits of its mixed hash. A probe passes
///   over other keys' entries without reading their keys: once the table is full, every new name
///   is looked for in vain, and reading each key its probe met cost a cache miss or two apiece.
///   The index grows from these entries alone, with no key hashed again.
///
/// At 100 000 records that is about 117 bytes a record: a key's 24 (its stride; the domain's
/// storage is the cache key's), a record's 72, and 21 of index (2^18 buckets of 8 bytes, the
/// first power of two that keeps the load under 3/4). The generic `LRUCache` took about 240
/// (measured with heaptrack during a preload).
struct StatsTable {
    private struct Key: Equatable {
        var domain: String
        var network: UInt32
        var family: RecordFamily
    }

    let limit: Int
    private var keys: [Key] = []
    private var records: [PackedStats] = []
    /// Records that outgrew `PackedStats`, by slot; their packed copy is stale.
    private var wide: [Int32: DomainStats] = [:]
    private var networks: [String] = []
    private var networkNumbers: [String: UInt32] = [:]
    /// `fingerprint << 32 | (slot + 1)` per bucket, 0 when empty; its size is a power of two.
    private var index: [UInt64] = []

    init(limit: Int) {
        precondition(limit >= 0 && limit < Int(Int32.max), "a statistics table holds fewer than 2^31 records")
        self.limit = limit
    }

    var count: Int { keys.count }

    /// Applies `change` to the record of `key`, creating it if there is room; false when the key
    /// is new and the table is full.
    mutating func update(_ key: StatsKey, _ change: (inout DomainStats) -> Void) -> Bool {
        let hash = key.tableHash
        if let slot = find(key, hash: hash) {
            modify(slot, change)
            return true
        }
        guard keys.count < limit else { return false }
        var record = DomainStats()
        change(&record)
        append(key, record, hash: hash)
        return true
    }

    /// The record of `key`, if it has one.
    func record(_ key: StatsKey) -> DomainStats? {
        find(key, hash: key.tableHash).map(self.record(at:))
    }

    /// Every key and record, in the order the keys were first seen.
    var entries: [(StatsKey, DomainStats)] {
        keys.indices.map { slot in (statsKey(at: slot), record(at: Int32(slot))) }
    }

    /// Up to `limit` records from slot `start` in the order their keys were first seen, and the
    /// slot after them (nil at the end). Keys are never removed, so paging by slot lists every
    /// record once, and records added meanwhile at the end.
    func page(from start: Int, limit: Int) -> (records: [(StatsKey, DomainStats)], next: Int?) {
        let from = min(max(0, start), keys.count)
        let end = min(keys.count, from + limit)
        let records = (from..<end).map { slot in (statsKey(at: slot), record(at: Int32(slot))) }
        return (records, end < keys.count ? end : nil)
    }

    /// The records of `domain`, every family and network, in the order they were first seen:
    /// one lookup per (family, network seen), not a walk of the table.
    func records(domain: String) -> [(StatsKey, DomainStats)] {
        var found: [(Int32, StatsKey)] = []
        for network in networks {
            for family in RecordFamily.allCases {
                let key = StatsKey(domain: domain, family: family, network: network)
                if let slot = find(key, hash: key.tableHash) { found.append((slot, key)) }
            }
        }
        return found.sorted { $0.0 < $1.0 }.map { ($0.1, record(at: $0.0)) }
    }

    /// The client networks the records were made for.
    var networksSeen: [String] { networks }

    private func statsKey(at slot: Int) -> StatsKey {
        let key = keys[slot]
        return StatsKey(domain: key.domain, family: key.family, network: networks[Int(key.network)])
    }

    // MARK: Records

    private func record(at slot: Int32) -> DomainStats {
        wide.isEmpty ? records[Int(slot)].unpacked : (wide[slot] ?? records[Int(slot)].unpacked)
    }

    private mutating func modify(_ slot: Int32, _ change: (inout DomainStats) -> Void) {
        if !wide.isEmpty, wide[slot] != nil {
            change(&wide[slot]!)
            return
        }
        var record = records[Int(slot)].unpacked
        change(&record)
        store(record, at: slot)
    }

    private mutating func store(_ record: DomainStats, at slot: Int32) {
        if let packed = PackedStats(record) {
            records[Int(slot)] = packed
        } else {
            wide[slot] = record
        }
    }

    private mutating func append(_ key: StatsKey, _ record: DomainStats, hash: Int) {
        if keys.count == keys.capacity {
            let grown = min(limit, max(16, keys.capacity + keys.capacity / 2))
            keys.reserveCapacity(grown)
            records.reserveCapacity(grown)
        }
        let slot = Int32(keys.count)
        keys.append(Key(domain: key.domain, network: networkNumber(key.network), family: key.family))
        records.append(PackedStats())
        store(record, at: slot)
        if keys.count * 4 > index.count * 3 { rebuildIndex() }
        insert(slot: slot, hash: hash)
    }

    private mutating func networkNumber(_ network: String) -> UInt32 {
        if let number = networkNumbers[network] { return number }
        let number = UInt32(networks.count)
        networks.append(network)
        networkNumbers[network] = number
        return number
    }

    // MARK: Index

    /// The top 32 bits of `hash` mixed by a multiplication: the key's fingerprint in the index,
    /// whose leading bits are its first bucket.
    static func fingerprint(_ hash: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: (UInt64(bitPattern: Int64(hash)) &* 0x9E37_79B9_7F4A_7C15) >> 32)
    }

    /// The first bucket of `fingerprint`: its leading bits, as many as the index has (at most 2^32
    /// buckets, for fewer than 2^31 records).
    private func bucket(_ fingerprint: UInt32) -> Int {
        Int(fingerprint >> UInt32(32 - index.count.trailingZeroBitCount))
    }

    /// The slot of `key`. The network is compared as text, which for an account's few networks
    /// (often just `default`) costs less than looking its number up.
    private func find(_ key: StatsKey, hash: Int) -> Int32? {
        guard !index.isEmpty else { return nil }
        let mask = index.count - 1
        let fingerprint = Self.fingerprint(hash)
        var bucket = bucket(fingerprint)
        while true {
            let entry = index[bucket]
            if entry == 0 { return nil }
            if UInt32(truncatingIfNeeded: entry >> 32) == fingerprint {
                let slot = Int32(truncatingIfNeeded: entry) &- 1
                let candidate = keys[Int(slot)]
                if candidate.family == key.family && candidate.domain == key.domain && networks[Int(candidate.network)] == key.network {
                    return slot
                }
            }
            bucket = (bucket + 1) & mask
        }
    }

    private mutating func insert(slot: Int32, hash: Int) {
        insert(entry: UInt64(Self.fingerprint(hash)) << 32 | UInt64(slot + 1))
    }

    private mutating func insert(entry: UInt64) {
        let mask = index.count - 1
        var bucket = bucket(UInt32(truncatingIfNeeded: entry >> 32))
        while index[bucket] != 0 { bucket = (bucket + 1) & mask }
        index[bucket] = entry
    }

    /// Grows the index to keep its load under 3/4: its entries move by their fingerprints, with
    /// no key read or hashed again.
    private mutating func rebuildIndex() {
        var size = 16
        while size * 3 < keys.count * 4 + 4 { size *= 2 }
        let old = index
        index = [UInt64](repeating: 0, count: size)
        for entry in old where entry != 0 { insert(entry: entry) }
    }
}

/// A `DomainStats` with 32-bit counters: 72 bytes instead of 112. Nil from `init?(_:)` when a
/// counter does not fit.
struct PackedStats: Equatable {
    var successNum: UInt32 = 0
    var cacheDnsNum: UInt32 = 0
    var requestPDnsNum: UInt32 = 0
    var gobackLocaldnsNum: UInt32 = 0
    var localErro: UInt32 = 0
    var timeoutErro: UInt32 = 0
    var noResponseErro: UInt32 = 0
    var noPermissionErro: UInt32 = 0
    var urlParameterErro: UInt32 = 0
    var urlPathErro: UInt32 = 0
    var staleNum: UInt32 = 0
    var prefetchNum: UInt32 = 0
    var ruleNum: UInt32 = 0
    var rttCount: UInt32 = 0
    var rttTotalMilliseconds: Double = 0
    var maxRttMilliseconds: Double = 0

    init() {}

    init?(_ stats: DomainStats) {
        guard let successNum = UInt32(exactly: stats.successNum),
            let cacheDnsNum = UInt32(exactly: stats.cacheDnsNum),
            let requestPDnsNum = UInt32(exactly: stats.requestPDnsNum),
            let gobackLocaldnsNum = UInt32(exactly: stats.gobackLocaldnsNum),
            let localErro = UInt32(exactly: stats.localErro),
            let timeoutErro = UInt32(exactly: stats.timeoutErro),
            let noResponseErro = UInt32(exactly: stats.noResponseErro),
            let noPermissionErro = UInt32(exactly: stats.noPermissionErro),
            let urlParameterErro = UInt32(exactly: stats.urlParameterErro),
            let urlPathErro = UInt32(exactly: stats.urlPathErro),
            let staleNum = UInt32(exactly: stats.staleNum),
            let prefetchNum = UInt32(exactly: stats.prefetchNum),
            let ruleNum = UInt32(exactly: stats.ruleNum),
            let rttCount = UInt32(exactly: stats.rttCount)
        else { return nil }
        self.successNum = successNum
        self.cacheDnsNum = cacheDnsNum
        self.requestPDnsNum = requestPDnsNum
        self.gobackLocaldnsNum = gobackLocaldnsNum
        self.localErro = localErro
        self.timeoutErro = timeoutErro
        self.noResponseErro = noResponseErro
        self.noPermissionErro = noPermissionErro
        self.urlParameterErro = urlParameterErro
        self.urlPathErro = urlPathErro
        self.staleNum = staleNum
        self.prefetchNum = prefetchNum
        self.ruleNum = ruleNum
        self.rttCount = rttCount
        self.rttTotalMilliseconds = stats.rttTotalMilliseconds
        self.maxRttMilliseconds = stats.maxRttMilliseconds
    }

    var unpacked: DomainStats {
        var stats = DomainStats()
        stats.successNum = UInt64(successNum)
        stats.cacheDnsNum = UInt64(cacheDnsNum)
        stats.requestPDnsNum = UInt64(requestPDnsNum)
        stats.gobackLocaldnsNum = UInt64(gobackLocaldnsNum)
        stats.localErro = UInt64(localErro)
        stats.timeoutErro = UInt64(timeoutErro)
        stats.noResponseErro = UInt64(noResponseErro)
        stats.noPermissionErro = UInt64(noPermissionErro)
        stats.urlParameterErro = UInt64(urlParameterErro)
        stats.urlPathErro = UInt64(urlPathErro)
        stats.staleNum = UInt64(staleNum)
        stats.prefetchNum = UInt64(prefetchNum)
        stats.ruleNum = UInt64(ruleNum)
        stats.rttCount = UInt64(rttCount)
        stats.rttTotalMilliseconds = rttTotalMilliseconds
        stats.maxRttMilliseconds = maxRttMilliseconds
        return stats
    }
}
