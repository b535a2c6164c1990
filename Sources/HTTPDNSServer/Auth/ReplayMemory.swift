import HTTPDNSCore
import Synchronization

/// The signatures of state-changing requests (POST, DELETE) already served, until they expire:
/// a second request with the same signature inside its validity window is a replay. Bounded:
/// at `capacity` live entries a new signature is refused (never accepted unremembered) until
/// the earliest remembered one expires. A value type with no clock: `ReplayGuard` owns the
/// memories of all accounts behind a lock and passes the time in.
struct ReplayMemory {
    enum Outcome: Equatable {
        /// First use: remembered until its expiry.
        case accepted
        /// Used before and not expired yet.
        case replayed
        /// Full of live signatures; the earliest expires at this time.
        case full(until: Timestamp)
    }

    let capacity: Int
    private var expiries: [[UInt8]: Timestamp] = [:]

    init(capacity: Int) {
        self.capacity = capacity
    }

    var count: Int { expiries.count }

    /// Records `signature` (valid until `expiry`) unless it is a replay or there is no room.
    mutating func use(_ signature: [UInt8], expiry: Timestamp, now: Timestamp) -> Outcome {
        if let known = expiries[signature], known >= now { return .replayed }
        if expiries.count >= capacity {
            expiries = expiries.filter { $0.value >= now }
            if expiries.count >= capacity { return .full(until: expiries.values.min() ?? now) }
        }
        expiries[signature] = expiry
        return .accepted
    }
}

/// The replay memories of all accounts (one `ReplayMemory` each, made on first use).
final class ReplayGuard: Sendable {
    let capacityPerAccount: Int
    private let locked_memories: Mutex<[String: ReplayMemory]> = Mutex([:])

    init(capacityPerAccount: Int) {
        self.capacityPerAccount = capacityPerAccount
    }

    func use(_ signature: [UInt8], expiry: Timestamp, account: String, now: Timestamp) -> ReplayMemory.Outcome {
        locked_memories.withLock { memories in
            memories[account, default: ReplayMemory(capacity: capacityPerAccount)].use(signature, expiry: expiry, now: now)
        }
    }
}
