import Synchronization

/// The engines of all accounts by id. A lookup (every request) is a lock-free read of the
/// current table; creating or removing an account publishes a new table (`ReadMostly`).
///
/// The table is split into `shardCount` shards by a hash of the id, each its own `ReadMostly`:
/// publishing copies the shard, not every account, and a replaced copy is kept for
/// `ReadMostly.gracePeriod`. With one table, 5 000 accounts created in a minute (or loaded at
/// start) kept 5 000 copies of a growing table alive: O(n²) memory, about 100 KB an account.
/// Split, each copy holds about n / `shardCount` entries.
public final class AccountRegistry: Sendable {
    static let shardCount = 256

    /// While there are few accounts, the request path compares the ids as bytes against a list
    /// (cheaper than hashing the id); nil once there are more than `scanLimit`.
    private struct Small: Sendable {
        static let scanLimit = 8

        /// Unretained: a shard holds them.
        var list: [(id: [UInt8], engine: Unmanaged<ResolverEngine>)]?
    }

    /// What the writers keep beside the shards.
    private struct Totals {
        var count = 0
        /// The accounts that require signed requests (`AccountConfig.requiresSignatures`).
        var signed: Set<String> = []
    }

    private let shards: [ReadMostly<[String: ResolverEngine]>]
    private let small: ReadMostly<Small>
    /// Serialises writers, so that `small` always lists what the shards hold and `signed` which
    /// accounts require signatures.
    private let writer = Mutex(Totals())
    private let anySigned = Atomic<Bool>(false)
    private let makeEngine: @Sendable (String, AccountConfig) -> ResolverEngine

    public init(makeEngine: @escaping @Sendable (String, AccountConfig) -> ResolverEngine) {
        self.makeEngine = makeEngine
        shards = (0..<Self.shardCount).map { _ in ReadMostly([:]) }
        small = ReadMostly(Small(list: []))
    }

    /// The shard of an id: FNV-1a over its bytes, not `hashValue`, so that a lookup runs the
    /// (seeded, slower) `Hasher` once, in the shard's dictionary, rather than twice. The spread
    /// over shards only sets how much an admin write copies; it decides nothing else.
    static func shardIndex(_ id: UnsafeRawBufferPointer) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in id { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return Int(truncatingIfNeeded: (hash &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - shardCount.trailingZeroBitCount))
    }

    private func shardIndex(_ id: String) -> Int {
        var id = id
        return id.withUTF8 { Self.shardIndex(UnsafeRawBufferPointer($0)) }
    }

    private func shard(_ id: String) -> ReadMostly<[String: ResolverEngine]> {
        shards[shardIndex(id)]
    }

    /// Looked up as bytes in the short list while there are few accounts, as `withEngine` does.
    public func engine(_ id: String) -> ResolverEngine? {
        var text = id
        // Retained while the list is read: the list holds its engines unretained.
        let listed = text.withUTF8 { bytes in
            small.read { Self.find(UnsafeRawBufferPointer(bytes), in: $0).map { $0?.takeUnretainedValue() } }
        }
        if let listed { return listed }
        return shard(id).read { $0[id] }
    }

    /// The engine of `id` in the short list: nil when there is no list (too many accounts),
    /// `.some(nil)` when the list does not have it.
    private static func find(_ id: UnsafeRawBufferPointer, in small: Small) -> Unmanaged<ResolverEngine>?? {
        guard let list = small.list else { return nil }
        return .some(list.first { entry in entry.id.withUnsafeBytes { $0.hasSameBytes(as: id) } }?.engine)
    }

    /// Runs `body` with the engine of an id given as bytes (the resolve fast path reads it from
    /// the request); nil, without calling it, when there is none. While there are few accounts
    /// the engine is not retained: every request would write the same engine's reference count
    /// from every HTTP thread. It stays alive for the call as the shard's table does
    /// (`ReadMostly.read`).
    @discardableResult
    public func withEngine<R>(utf8 id: UnsafeRawBufferPointer, _ body: (ResolverEngine) -> R) -> R? {
        small.read { small in
            guard let listed = Self.find(id, in: small) else {
                let shard = shards[Self.shardIndex(id)]
                let id = String(decoding: id, as: UTF8.self)
                return shard.read { $0[id] }.map(body)
            }
            return listed.map { $0._withUnsafeGuaranteedRef(body) }
        }
    }

    /// The same for a path segment (not generic: this runs on every request).
    public func engine(_ id: Substring) -> ResolverEngine? {
        engine(String(id))
    }

    private var byID: [String: ResolverEngine] {
        var all: [String: ResolverEngine] = [:]
        for shard in shards { all.merge(shard.value) { first, _ in first } }
        return all
    }

    public var ids: [String] { byID.keys.sorted() }

    public var all: [ResolverEngine] { byID.values.sorted { $0.accountID < $1.accountID } }

    public var count: Int { shards.reduce(0) { $0 + $1.value.count } }

    /// Whether some account requires signed requests: then a request to an account that does not
    /// exist is refused as a signed account refuses a caller without a valid key, so that no one
    /// without a key can tell which accounts exist. One atomic load.
    public var hidesAccounts: Bool { anySigned.load(ordering: .acquiring) }

    /// Records whether account `id` requires signatures, as the configuration it holds now says
    /// (read under `writer`, after the caller's update: of two racing writers, the later one
    /// records the configuration that stayed). Under `writer`.
    private func noteSigning(_ id: String, _ totals: inout Totals) {
        // The shard, not `engine(_:)`: the short list is republished after this, when at all.
        let config = shard(id).read { $0[id] }?.config
        if config?.requiresSignatures == true { totals.signed.insert(id) } else { totals.signed.remove(id) }
        anySigned.store(!totals.signed.isEmpty, ordering: .releasing)
    }

    /// Creates the account or updates its configuration in place (its cache stays warm).
    /// Returns true when the account is new.
    @discardableResult
    public func upsert(_ id: String, config: AccountConfig) -> Bool {
        if let existing = engine(id) {
            existing.update(config: config)
            writer.withLock { noteSigning(id, &$0) }
            return false
        }
        let engine = makeEngine(id, config)
        let winner: ResolverEngine? = writer.withLock { totals in
            let winner: ResolverEngine? = shard(id).update { table in
                if let existing = table[id] { return (table, existing) }
                var table = table
                table[id] = engine
                return (table, nil)
            }
            if winner == nil {
                totals.count += 1
                publishSmall(totals.count)
            }
            return winner
        }
        // Another caller created the account meanwhile: this call's configuration still applies.
        winner?.update(config: config)
        writer.withLock { noteSigning(id, &$0) }
        if winner == nil { Log.debug("account created", [("account", id)]) }
        return winner == nil
    }

    /// `upsert` for many accounts (a start loads every stored one), publishing each shard once
    /// rather than once per account. An id given twice takes its last configuration.
    public func upsert(contentsOf accounts: [(id: String, config: AccountConfig)]) {
        var fresh: [Int: [String: ResolverEngine]] = [:]
        var configs: [String: AccountConfig] = [:]
        for (id, config) in accounts { configs[id] = config }
        for (id, config) in configs {
            if let existing = engine(id) {
                existing.update(config: config)
            } else {
                fresh[shardIndex(id), default: [:]][id] = makeEngine(id, config)
            }
        }
        let raced: [ResolverEngine] = writer.withLock { totals in
            var raced: [ResolverEngine] = []
            for (index, engines) in fresh {
                shards[index].update { table in
                    var table = table
                    for (id, engine) in engines {
                        if let existing = table[id] {
                            raced.append(existing)
                        } else {
                            table[id] = engine
                            totals.count += 1
                        }
                    }
                    return (table, ())
                }
            }
            publishSmall(totals.count)
            return raced
        }
        // Created by another caller meanwhile: this call's configuration still applies.
        for engine in raced { configs[engine.accountID].map(engine.update(config:)) }
        writer.withLock { totals in
            for id in configs.keys { noteSigning(id, &totals) }
        }
    }

    /// Removes the account; returns its engine (so the caller can drop its cache), nil if unknown.
    @discardableResult
    public func remove(_ id: String) -> ResolverEngine? {
        writer.withLock { totals in
            let removed: ResolverEngine? = shard(id).update { table in
                var table = table
                let removed = table.removeValue(forKey: id)
                return (table, removed)
            }
            if removed != nil {
                noteSigning(id, &totals)
                totals.count -= 1
                publishSmall(totals.count)
                Log.debug("account removed", [("account", id)])
            }
            return removed
        }
    }

    /// Republishes the byte-compared list when it changes: while there are at most
    /// `Small.scanLimit` accounts, and once when their number goes past it. Under `writer`.
    private func publishSmall(_ total: Int) {
        if total > Small.scanLimit {
            if small.value.list != nil { small.update { _ in (Small(list: nil), ()) } }
            return
        }
        let list = byID.map { (Array($0.key.utf8), Unmanaged.passUnretained($0.value)) }
        small.update { _ in (Small(list: list), ()) }
    }

    /// Releases the replaced tables whose grace period is over (a later write would too).
    public func reclaimRetired() {
        small.reclaim()
        for shard in shards { shard.reclaim() }
    }

    /// Entries held by replaced tables still in their grace period: what creating or removing
    /// accounts has left in memory for now.
    public var retiredEntries: Int {
        shards.reduce(0) { $0 + $1.retiredSize(\.count) } + small.retiredSize { $0.list?.count ?? 0 }
    }
}
