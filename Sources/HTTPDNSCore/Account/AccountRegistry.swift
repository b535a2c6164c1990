import Synchronization

/// The engines of all accounts by id. A lookup (every request) is a lock-free read of the
/// current table; creating or removing an account publishes a new table (`ReadMostly`).
public final class AccountRegistry: Sendable {
    /// The accounts as readers see them: by id, and, while there are few, also as a list whose
    /// ids the request path compares as bytes (cheaper than hashing the id for a dictionary).
    private struct Table: Sendable {
        static let scanLimit = 8

        var byID: [String: ResolverEngine] = [:]
        /// Unretained: `byID` holds them.
        var list: [(id: [UInt8], engine: Unmanaged<ResolverEngine>)] = []

        init(_ byID: [String: ResolverEngine]) {
            self.byID = byID
            if byID.count <= Self.scanLimit { list = byID.map { (Array($0.key.utf8), .passUnretained($0.value)) } }
        }
    }

    private let engines: ReadMostly<Table>
    private let makeEngine: @Sendable (String, AccountConfig) -> ResolverEngine

    public init(makeEngine: @escaping @Sendable (String, AccountConfig) -> ResolverEngine) {
        self.makeEngine = makeEngine
        self.engines = ReadMostly(Table([:]))
    }

    public func engine(_ id: String) -> ResolverEngine? {
        engines.read { $0.byID[id] }
    }

    /// Runs `body` with the engine of an id given as bytes (the resolve fast path reads it from
    /// the request); nil, without calling it, when there is none. While there are few accounts
    /// the engine is not retained: every request would write the same engine's reference count
    /// from every HTTP thread. It stays alive for the call as the table does (`ReadMostly.read`).
    @discardableResult
    public func withEngine<R>(utf8 id: UnsafeRawBufferPointer, _ body: (ResolverEngine) -> R) -> R? {
        engines.read { table in
            guard table.byID.count <= Table.scanLimit else { return table.byID[String(decoding: id, as: UTF8.self)].map(body) }
            let index = table.list.firstIndex { $0.id.count == id.count && $0.id.withUnsafeBytes { $0.elementsEqual(id) } }
            return index.map { table.list[$0].engine._withUnsafeGuaranteedRef(body) }
        }
    }

    /// The same for a path segment (not generic: this runs on every request).
    public func engine(_ id: Substring) -> ResolverEngine? {
        engine(String(id))
    }

    public var ids: [String] { engines.value.byID.keys.sorted() }

    public var all: [ResolverEngine] { engines.value.byID.values.sorted { $0.accountID < $1.accountID } }

    /// Creates the account or updates its configuration in place (its cache stays warm).
    /// Returns true when the account is new.
    @discardableResult
    public func upsert(_ id: String, config: AccountConfig) -> Bool {
        if let existing = engine(id) {
            existing.update(config: config)
            return false
        }
        let engine = makeEngine(id, config)
        let winner: ResolverEngine? = engines.update { table in
            if let existing = table.byID[id] { return (table, existing) }
            var byID = table.byID
            byID[id] = engine
            return (Table(byID), nil)
        }
        // Another caller created the account meanwhile: this call's configuration still applies.
        winner?.update(config: config)
        return winner == nil
    }

    /// Removes the account; returns its engine (so the caller can drop its cache), nil if unknown.
    @discardableResult
    public func remove(_ id: String) -> ResolverEngine? {
        engines.update { table in
            var byID = table.byID
            let removed = byID.removeValue(forKey: id)
            return (Table(byID), removed)
        }
    }
}
