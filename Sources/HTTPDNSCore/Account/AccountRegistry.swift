import Synchronization

/// The engines of all accounts by id. Lookups take a short lock and copy one reference.
public final class AccountRegistry: Sendable {
    private let engines: Mutex<[String: ResolverEngine]>
    private let makeEngine: @Sendable (String, AccountConfig) -> ResolverEngine

    public init(makeEngine: @escaping @Sendable (String, AccountConfig) -> ResolverEngine) {
        self.makeEngine = makeEngine
        self.engines = Mutex([:])
    }

    public func engine(_ id: String) -> ResolverEngine? {
        engines.withLock { $0[id] }
    }

    /// The same for a path segment (not generic: this runs on every request).
    public func engine(_ id: Substring) -> ResolverEngine? {
        engine(String(id))
    }

    public var ids: [String] { engines.withLock { Array($0.keys) }.sorted() }

    public var all: [ResolverEngine] { engines.withLock { Array($0.values) }.sorted { $0.accountID < $1.accountID } }

    /// Creates the account or updates its configuration in place (its cache stays warm).
    /// Returns true when the account is new.
    @discardableResult
    public func upsert(_ id: String, config: AccountConfig) -> Bool {
        if let existing = engine(id) {
            existing.update(config: config)
            return false
        }
        let engine = makeEngine(id, config)
        let winner: ResolverEngine? = engines.withLock { table in
            if let existing = table[id] { return existing }
            table[id] = engine
            return nil
        }
        // Another caller created the account meanwhile: this call's configuration still applies.
        winner?.update(config: config)
        return winner == nil
    }

    /// Removes the account; returns its engine (so the caller can drop its cache), nil if unknown.
    @discardableResult
    public func remove(_ id: String) -> ResolverEngine? {
        engines.withLock { $0.removeValue(forKey: id) }
    }
}
