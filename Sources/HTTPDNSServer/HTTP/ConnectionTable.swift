/// The connections of one listener counted per client, and what to do with a new one: the
/// policy of `ConnectionTracker`, a value with no lock, no clock and no socket of its own (the
/// tracker keeps it behind its `Mutex` and shuts down what it names).
///
/// **Shedding.** When `connectionLimit` connections are open, a new connection from a client
/// holding few wins over the least useful connection of the client holding the most, as long as
/// that client holds at least two more than the newcomer (so shedding never goes back and
/// forth between equals): among that client's connections, an idle one (waiting for its next
/// request) first, the longest idle; else one still receiving its request, the longest at it.
/// A connection whose request is being answered is never shed, nor one of a trusted proxy
/// (they carry many clients; they are not counted per client either).
///
/// Clients are keyed by the caller (`ClientKeying`: an IPv6 peer by its prefix). Finding the
/// client holding the most costs nothing until the listener is full: `holding[n]` counts the
/// clients holding `n` connections, and `mostHeld` follows it.
struct ConnectionTable {
    /// What `admit` decided.
    enum Verdict {
        case admitted
        /// `connectionLimit` open and nothing may be shed.
        case atLimit
        /// The client holds `perIPConnectionLimit` already.
        case perAddress
        /// Admitted in place of `victim`, now marked closing: the caller shuts it down.
        case shed(TrackedConnection)
    }

    private(set) var open: [ObjectIdentifier: TrackedConnection] = [:]
    private var byClient: [PeerAddress: [TrackedConnection]] = [:]
    /// `holding[n]`: clients holding `n` connections (index 0 unused).
    private var holding: [Int] = [0]
    private var mostHeld = 0
    /// Open connections already shut down (reaped or shed) whose close has not come yet: they
    /// no longer count against `connectionLimit`.
    private(set) var closing = 0

    /// Connections that count against the limit.
    var occupied: Int { open.count - closing }

    /// Connections `client` (a key) holds.
    func held(by client: PeerAddress) -> Int { byClient[client]?.count ?? 0 }

    /// Whether a new connection from `client` (keyed; nil when unknown or a trusted proxy) may
    /// be accepted under `connectionLimit` and `perClient` (0: no per-client limit).
    mutating func admit(_ client: PeerAddress?, connectionLimit: Int, perClient: Int) -> Verdict {
        let holds = client.map(held) ?? 0
        if client != nil && perClient > 0 && holds >= perClient { return .perAddress }
        if occupied < connectionLimit { return .admitted }
        guard mostHeld >= holds + 2 else { return .atLimit }
        guard let heaviest = byClient.first(where: { $0.value.count == mostHeld })?.value, let victim = Self.leastUseful(heaviest) else {
            return .atLimit
        }
        markClosing(victim)
        return .shed(victim)
    }

    /// The connection of one client to shed: idle before receiving, the longest in its phase
    /// first; nil when every one is being answered or closing already.
    static func leastUseful(_ connections: [TrackedConnection]) -> TrackedConnection? {
        var best: (connection: TrackedConnection, rank: Int, since: Int)?
        for connection in connections where !connection.closing {
            let (phase, since) = connection.state
            let rank: Int
            switch phase {
            case .handling: continue
            case .idle: rank = 0
            case .opening, .reading: rank = 1
            }
            if best == nil || (rank, since) < (best!.rank, best!.since) { best = (connection, rank, since) }
        }
        return best?.connection
    }

    /// Marks `connection` shut down: it stops counting against the limit now.
    mutating func markClosing(_ connection: TrackedConnection) {
        guard !connection.closing else { return }
        connection.closing = true
        closing += 1
    }

    mutating func add(_ connection: TrackedConnection) {
        open[ObjectIdentifier(connection)] = connection
        guard let client = connection.client else { return }
        let count = byClient[client, default: []].count
        connection.slot = count
        byClient[client, default: []].append(connection)
        move(from: count, to: count + 1)
    }

    mutating func remove(_ connection: TrackedConnection) {
        guard open.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
        if connection.closing { closing -= 1 }
        guard let client = connection.client, let count = byClient[client]?.count else { return }
        let last = byClient[client]!.removeLast()
        if last !== connection {
            byClient[client]![connection.slot] = last
            last.slot = connection.slot
        }
        if count == 1 { byClient[client] = nil }
        move(from: count, to: count - 1)
    }

    /// One client went from holding `old` connections to `new` (one more or one fewer).
    private mutating func move(from old: Int, to new: Int) {
        if old > 0 { holding[old] -= 1 }
        if new > 0 {
            if holding.count <= new { holding.append(0) }
            holding[new] += 1
        }
        if new > mostHeld { mostHeld = new }
        while mostHeld > 0 && holding[mostHeld] == 0 { mostHeld -= 1 }
    }
}
