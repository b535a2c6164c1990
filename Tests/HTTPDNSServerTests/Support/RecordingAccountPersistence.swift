import HTTPDNSCore
import Synchronization

/// An `AccountPersistence` that records every call together with what the registry held at that
/// moment (so a test can tell the change was saved before it took effect), and can be told to fail.
final class RecordingAccountPersistence: AccountPersistence {
    /// One call, with the registry's view of the account when it was made.
    struct Call: Sendable {
        enum Kind: Sendable, Equatable { case save, delete }
        var kind: Kind
        var id: String
        var json: String?
        /// The account's configuration in the registry during the call; nil when absent.
        var configInRegistry: AccountConfig?
    }

    private struct State {
        var calls: [Call] = []
        var failing = false
        var holding = false
        var held: [@Sendable () -> Void] = []
        var registry: AccountRegistry?
    }

    private let state = Mutex(State())

    init() {}

    /// The registry whose state each call records.
    var registry: AccountRegistry? {
        get { state.withLock { $0.registry } }
        set { state.withLock { $0.registry = newValue } }
    }

    /// While true, `saveAccount` and `deleteAccount` throw.
    func setFailing(_ failing: Bool) { state.withLock { $0.failing = failing } }

    var calls: [Call] { state.withLock { $0.calls } }

    /// While true, completions are held (as a store thread busy with the disk would) until
    /// `releaseHeld()`.
    func setHolding(_ holding: Bool) { state.withLock { $0.holding = holding } }

    /// Runs the held writes and their completions, in order; returns how many.
    @discardableResult
    func releaseHeld() -> Int {
        let held = state.withLock { state -> [@Sendable () -> Void] in
            defer { state.held.removeAll() }
            return state.held
        }
        for write in held { write() }
        return held.count
    }

    func saveAccount(id: String, json: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        write { completion(Result { try self.record(Call(kind: .save, id: id, json: json)) }) }
    }

    func deleteAccount(id: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        write { completion(Result { try self.record(Call(kind: .delete, id: id, json: nil)) }) }
    }

    private func write(_ body: @escaping @Sendable () -> Void) {
        let run = state.withLock { state -> Bool in
            if state.holding { state.held.append(body) }
            return !state.holding
        }
        if run { body() }
    }

    func loadAccounts() throws -> [String: String?] { [:] }

    private func record(_ call: Call) throws {
        let (failing, registry) = state.withLock { ($0.failing, $0.registry) }
        if failing { throw AccountWriteFailure(reason: "full (SQLite result code 13)", retryAfterSeconds: 4, detail: "test") }
        var call = call
        call.configInRegistry = registry?.engine(call.id)?.config
        let recorded = call
        state.withLock { $0.calls.append(recorded) }
    }
}
