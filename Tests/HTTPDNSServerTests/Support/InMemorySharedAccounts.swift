import HTTPDNSCore
import Synchronization

/// A `SharedAccountStore` in memory with Redis's rules (one version counter, writes and offers
/// as the Lua scripts of `RedisSharedAccounts` do them, publish to every joined replicator),
/// delivering synchronously. `down` fails every call as an unreachable Redis would; `loseData`
/// is a Redis restarted empty.
final class InMemorySharedAccounts: SharedAccountStore {
    private struct State {
        var records: [String: AccountRecord] = [:]
        var counter: Int64 = 0
        var down = false
        /// Writes fail as when the connection broke after sending them (the outcome unknown).
        var losesWrites = false
        var replicators: [AccountReplicator] = []
        /// Claimed signatures, `account:signature` (never expired: tests are short).
        var signatures: Set<String> = []
    }

    private let state = Mutex(State())

    func join(_ replicator: AccountReplicator) {
        replicator.attach(self)
        state.withLock { $0.replicators.append(replicator) }
    }

    func setDown(_ down: Bool) { state.withLock { $0.down = down } }

    func setLosesWrites(_ loses: Bool) { state.withLock { $0.losesWrites = loses } }

    func loseData() {
        state.withLock {
            $0.records = [:]; $0.counter = 0
        }
    }

    var records: [String: AccountRecord] { state.withLock { $0.records } }

    private static let unavailable = ReplicationError(.unavailable, "Redis: unavailable: connection refused")

    func write(
        _ record: AccountRecord, ifVersion: Int64?, completion: @escaping @Sendable (Result<AccountRecord, ReplicationError>) -> Void
    ) {
        if state.withLock({ $0.losesWrites }) {
            return completion(.failure(ReplicationError(.unknownOutcome, "Redis: connection_lost: the connection was lost")))
        }
        if let ifVersion, state.withLock({ ($0.records[record.id]?.version ?? 0) != ifVersion }) {
            return completion(.failure(ReplicationError(.conflict, "account \(record.id): not at version \(ifVersion)")))
        }
        let stored: AccountRecord? = state.withLock { state in
            guard !state.down else { return nil }
            state.counter += 1
            let floor = max(record.version, state.records[record.id]?.version ?? 0)
            if state.counter <= floor { state.counter = floor + 1 }
            var stored = record
            stored.version = state.counter
            state.records[record.id] = stored
            return stored
        }
        guard let stored else { return completion(.failure(Self.unavailable)) }
        deliver(stored)
        completion(.success(stored))
    }

    func offer(_ record: AccountRecord, completion: @escaping @Sendable (Result<AccountRecord, ReplicationError>) -> Void) {
        let outcome: (AccountRecord, Bool)? = state.withLock { state in
            guard !state.down else { return nil }
            if let current = state.records[record.id], record.version == 0 || current.version >= record.version {
                return (current, false)
            }
            var stored = record
            if record.version == 0 {
                state.counter += 1
                stored.version = state.counter
            } else {
                state.counter = max(state.counter, record.version)
            }
            state.records[record.id] = stored
            return (stored, true)
        }
        guard let (held, stored) = outcome else { return completion(.failure(Self.unavailable)) }
        if stored { deliver(held) }
        completion(.success(held))
    }

    func loadAll(completion: @escaping @Sendable (Result<[AccountRecord], ReplicationError>) -> Void) {
        let records: [AccountRecord]? = state.withLock { $0.down ? nil : Array($0.records.values) }
        completion(records.map { .success($0) } ?? .failure(Self.unavailable))
    }

    func publish(_ invalidation: CacheInvalidation) {
        let replicators: [AccountReplicator] = state.withLock { $0.down ? [] : $0.replicators }
        for replicator in replicators { replicator.received(invalidation) }
    }

    func claim(
        account: String, signature: String, expiry: Timestamp, completion: @escaping @Sendable (Result<Bool, ReplicationError>) -> Void
    ) {
        let stored: Bool? = state.withLock { $0.down ? nil : $0.signatures.insert("\(account):\(signature)").inserted }
        completion(stored.map { .success($0) } ?? .failure(Self.unavailable))
    }

    /// Stores `config` for `id` under the next version without telling any replica, as a change
    /// made by another replica whose message has not arrived yet.
    func writeUnannounced(id: String, config: AccountConfig) {
        state.withLock { state in
            state.counter += 1
            state.records[id] = AccountRecord(id: id, version: state.counter, config: config)
        }
    }

    private func deliver(_ record: AccountRecord) {
        for replicator in state.withLock({ $0.replicators }) { replicator.received(record) }
    }
}
