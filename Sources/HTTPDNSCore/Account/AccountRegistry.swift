import Synchronization

/// The engines of all accounts by id. A lookup (every request) is a lock-free read of the
/// current table; creating or removing an account publishes a new table (`ReadMostly`).
public final class AccountRegistry: Sendable {
    private let engines: ReadMostly<[String: ResolverEngine]>
    private let makeEngine: @Sendable (String, AccountConfig) -> ResolverEngine

    public init(makeEngine: @escaping @Sendable (String, AccountConfig) -> ResolverEngine) {
        self.makeEngine = makeEngine
        self.engines = ReadMostly([:])
    }

    public func engine(_ id: String) -> ResolverEngine? {
        engines.read { $0[id] }
    }

    /// The same for a path segment (not generic: this runs on every request).
    public func engine(_ id: Substring) -> ResolverEngine? {
        engine(String(id))
    }

    public var ids: [String] { engines.value.keys.sorted() }

    public var all: [ResolverEngine] { engines.value.values.sorted { $0.accountID < $1.accountID } }

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
            if let existing = table[id] { return (table, existing) }
            var table = table
            table[id] = engine
            return (table, nil)
        }
        // Another caller created the account meanwhile: this call's configuration still applies.
        winner?.update(config: config)
        return winner == nil
    }

    /// Removes the account; returns its engine (so the caller can drop its cache), nil if unknown.
    @discardableResult
    public func remove(_ id: String) -> ResolverEngine? {
        engines.update { table in
            var table = table
            let removed = table.removeValue(forKey: id)
            return (table, removed)
        }
    }
}
