import Synchronization

/// The shell of account replication: owns an `AccountReplicationState`, asks it what
/// to do with each change, then does it outside the lock: records to apply are written to the
/// local database (so the replica restarts with them while Redis is down) and, once durable,
/// to the registry; records to offer go to the shared store.
///
/// The shared store (Redis) calls `received(_:)` for each published record and cache change and
/// `connected()` after each (re)subscription; the admin API calls `writeAccount`. Records hold
/// secrets: only ids and versions are logged.
public final class AccountReplicator: Replication, Sendable {
    /// This replica's name in published cache changes (random per process).
    public let origin: String
    private let registry: AccountRegistry
    private let localStore: any AccountPersistence
    private let preloadConcurrency: Int
    private let locked_state: Mutex<AccountReplicationState>
    private let locked_shared = Mutex<(any SharedAccountStore)?>(nil)

    /// `records`: the configuration file's accounts (version 0) then the local database's rows,
    /// as the registry was filled at start.
    public init(records: [AccountRecord], registry: AccountRegistry, localStore: any AccountPersistence, preloadConcurrency: Int = 8) {
        origin = String(UInt64.random(in: 1...UInt64.max), radix: 36)
        self.registry = registry
        self.localStore = localStore
        self.preloadConcurrency = preloadConcurrency
        locked_state = Mutex(AccountReplicationState(local: records))
    }

    /// The shared store to write to; set once, before it starts delivering.
    public func attach(_ shared: any SharedAccountStore) {
        locked_shared.withLock { $0 = shared }
    }

    private var shared: (any SharedAccountStore)? { locked_shared.withLock { $0 } }

    /// The record held here for `id` (tests, metrics).
    public func held(_ id: String) -> AccountRecord? {
        locked_state.withLock { $0.local[id] }
    }

    // MARK: From the shared store

    /// After (re)subscribing: reads every shared record and reconciles (Redis wins by version;
    /// what Redis lacks is offered back to it).
    public func connected() {
        guard let shared else { return }
        shared.loadAll { [self] result in
            switch result {
            case .success(let records):
                let actions = locked_state.withLock { $0.reconcile(shared: records) }
                let applied = actions.filter { if case .apply = $0 { true } else { false } }.count
                // Every reconnect and every periodic pass: a line only when something differed.
                if !actions.isEmpty {
                    Log.info(
                        "replication: reconciled with \(records.count) shared account records: \(applied) applied here, \(actions.count - applied) offered to Redis"
                    )
                }
                perform(actions)
            case .failure(let error):
                Log.warning("replication: could not read the shared accounts: \(error.message) (retried on the next reconnect)")
            }
        }
    }

    /// A record published by a replica (this one included).
    public func received(_ record: AccountRecord) {
        perform(locked_state.withLock { $0.receive(record) })
    }

    /// A cache change published by a replica: repeated here unless this replica made it.
    public func received(_ invalidation: CacheInvalidation) {
        guard invalidation.origin != origin, let engine = registry.engine(invalidation.account) else { return }
        switch invalidation.change {
        case .evict(let host):
            _ = engine.evict(host: host)
        case .evictAll:
            _ = engine.evictAll()
        case .preload(let hosts, let families, let network):
            Preloader.start(engine: engine, hosts: hosts, families: families, concurrency: preloadConcurrency, network: network) { _ in }
        }
    }

    // MARK: Replication (the admin API)

    public func writeAccount(
        id: String, config: AccountConfig?, ifVersion: Int64?,
        completion: @escaping @Sendable (Result<AccountRecord, ReplicationError>) -> Void
    ) {
        guard let shared else {
            return completion(.failure(ReplicationError(.unavailable, "replication has no shared store")))
        }
        let floor = locked_state.withLock { max(0, $0.local[id]?.version ?? 0) }
        shared.write(AccountRecord(id: id, version: floor, config: config), ifVersion: ifVersion) { [self] result in
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(let record):
                let (actions, held) = locked_state.withLock { state in (state.receive(record), state.local[id]) }
                guard let held else {
                    return completion(.failure(ReplicationError(.localStore, "account \(id): no record held after the write")))
                }
                if actions.isEmpty {
                    // Already applied (its message came first) or superseded: store what is held
                    // again so that the reply follows that earlier write to the database.
                    apply(held, reapplying: true) { completion($0.map { held }) }
                } else {
                    apply(record, reapplying: false) { completion($0.map { record }) }
                }
            }
        }
    }

    public func publish(account: String, change: CacheInvalidation.Change) {
        shared?.publish(CacheInvalidation(origin: origin, account: account, change: change))
    }

    public func claimSignature(
        account: String, signature: String, expiry: Timestamp, completion: @escaping @Sendable (Result<Bool, ReplicationError>) -> Void
    ) {
        guard let shared else {
            return completion(.failure(ReplicationError(.unavailable, "replication has no shared store")))
        }
        shared.claim(account: account, signature: signature, expiry: expiry, completion: completion)
    }

    // MARK: Side effects

    private func perform(_ actions: [AccountReplicationState.Action]) {
        for action in actions {
            switch action {
            case .apply(let record):
                apply(record, reapplying: false) { _ in }
            case .offer(let record):
                guard let shared else { continue }
                shared.offer(record) { [self] result in
                    switch result {
                    case .success(let winner): received(winner)
                    case .failure(let error):
                        Log.warning(
                            "replication: could not offer account \(record.id) (version \(record.version)) to Redis: \(error.message) (retried on the next reconnect)"
                        )
                    }
                }
            }
        }
    }

    /// Writes the record to the local database, then (once durable) to the registry. The
    /// database completes in the order of the calls, so the registry follows the same order.
    private func apply(_ record: AccountRecord, reapplying: Bool, completion: @escaping @Sendable (Result<Void, ReplicationError>) -> Void)
    {
        let json: String
        do {
            json = try record.encoded()
        } catch {
            Log.error("replication: account \(record.id) version \(record.version) cannot be written: \(error)")
            return completion(.failure(ReplicationError(.localStore, "account \(record.id): cannot be written to the database")))
        }
        localStore.saveAccount(id: record.id, json: json) { [self] result in
            switch result {
            case .success:
                if !reapplying {
                    if let config = record.config {
                        let created = registry.upsert(record.id, config: config)
                        Log.info("replication: account \(record.id) \(created ? "created" : "updated") (version \(record.version))")
                    } else if let engine = registry.remove(record.id) {
                        _ = engine.evictAll()
                        Log.info("replication: account \(record.id) deleted (version \(record.version))")
                    }
                }
                completion(.success(()))
            case .failure(let error):
                Log.error("replication: account \(record.id) version \(record.version) could not be stored here: \(error)")
                // Forget it, so that the next message or reconnect applies it again.
                locked_state.withLock { $0.forget(record) }
                completion(
                    .failure(
                        ReplicationError(.localStore, "account \(record.id): Redis holds the change, but this replica could not store it")))
            }
        }
    }
}
