import HTTPDNSCore
import Synchronization

/// The signatures of signed changes (`Route.isSignedChange`) already served, until they expire:
/// a second request with the same signature inside its validity window is a replay. Bounded:
/// at `capacity` live entries a new signature is refused (never accepted unremembered) until
/// the earliest remembered one expires. So that no one fills it for everybody, one key holds at
/// most `keyShare` of the entries and one client `clientShare`: a flood with one key, or from
/// one address, leaves room for the account's other keys and clients. A value type with no
/// clock: `ReplayGuard` owns the memories of all accounts behind a lock and passes the time in.
struct ReplayMemory {
    enum Outcome: Equatable {
        /// First use: remembered until its expiry.
        case accepted
        /// Used before and not expired yet.
        case replayed
        /// The account's memory, or this key's or client's share of it, is full of live
        /// signatures; the earliest of them expires at this time.
        case full(Limit, until: Timestamp)
    }

    /// Which bound refused a signature.
    enum Limit: Equatable {
        case account
        case key
        case client
    }

    /// Live entries of one key or one client, and the earliest expiry among them (exact after
    /// each purge; a lower bound between purges).
    private struct Tally {
        var count = 0
        var earliest = Timestamp.infinity

        mutating func add(_ expiry: Timestamp) {
            count += 1
            earliest = min(earliest, expiry)
        }
    }

    private struct Entry {
        var expiry: Timestamp
        var key: String
        var client: PeerAddress?
    }

    let capacity: Int
    /// Entries one key may hold: half the memory.
    let keyShare: Int
    /// Entries one client may hold: a quarter of the memory.
    let clientShare: Int
    private var entries: [[UInt8]: Entry] = [:]
    private var keys: [String: Tally] = [:]
    private var clients: [PeerAddress: Tally] = [:]
    /// The earliest expiry held (a lower bound between purges): nothing can be purged before it.
    private var earliest = Timestamp.infinity

    init(capacity: Int) {
        self.capacity = capacity
        keyShare = max(1, capacity / 2)
        clientShare = max(1, capacity / 4)
    }

    var count: Int { entries.count }

    /// Records `signature` (valid until `expiry`, made with `key`, sent by `client`) unless it
    /// is a replay or there is no room for it.
    mutating func use(_ signature: [UInt8], expiry: Timestamp, key: String, client: PeerAddress?, now: Timestamp) -> Outcome {
        if let known = entries[signature] {
            if known.expiry >= now { return .replayed }
            forget(signature, known)
        }
        if let refusal = refusal(key: key, client: client) {
            // Purged only when something has expired: a memory full of live entries is not
            // scanned again for each refused request.
            guard earliest < now else { return refusal }
            purge(now: now)
            if let refusal = self.refusal(key: key, client: client) { return refusal }
        }
        entries[signature] = Entry(expiry: expiry, key: key, client: client)
        keys[key, default: Tally()].add(expiry)
        if let client { clients[client, default: Tally()].add(expiry) }
        earliest = min(earliest, expiry)
        return .accepted
    }

    private func refusal(key: String, client: PeerAddress?) -> Outcome? {
        if entries.count >= capacity { return .full(.account, until: earliest) }
        if let tally = keys[key], tally.count >= keyShare { return .full(.key, until: tally.earliest) }
        if let client, let tally = clients[client], tally.count >= clientShare { return .full(.client, until: tally.earliest) }
        return nil
    }

    private mutating func forget(_ signature: [UInt8], _ entry: Entry) {
        entries[signature] = nil
        keys[entry.key]?.count -= 1
        if let client = entry.client { clients[client]?.count -= 1 }
    }

    /// Drops every expired entry and counts the rest again.
    private mutating func purge(now: Timestamp) {
        entries = entries.filter { $0.value.expiry >= now }
        keys = [:]
        clients = [:]
        earliest = .infinity
        for entry in entries.values {
            keys[entry.key, default: Tally()].add(entry.expiry)
            if let client = entry.client { clients[client, default: Tally()].add(entry.expiry) }
            earliest = min(earliest, entry.expiry)
        }
    }
}

/// The replay memories of all accounts (one `ReplayMemory` each, made on first use), for a
/// service without Redis; with Redis, Redis is the memory every replica shares (`Replication`).
final class ReplayGuard: Sendable {
    let capacityPerAccount: Int
    private let locked_memories: Mutex<[String: ReplayMemory]> = Mutex([:])

    init(capacityPerAccount: Int) {
        self.capacityPerAccount = capacityPerAccount
    }

    /// Signatures remembered for `account` (tests).
    func count(account: String) -> Int {
        locked_memories.withLock { $0[account]?.count ?? 0 }
    }

    func use(_ signature: [UInt8], expiry: Timestamp, key: String, client: PeerAddress?, account: String, now: Timestamp)
        -> ReplayMemory.Outcome
    {
        locked_memories.withLock { memories in
            memories[account, default: ReplayMemory(capacity: capacityPerAccount)]
                .use(signature, expiry: expiry, key: key, client: client, now: now)
        }
    }
}
