import HTTPDNSCore

/// The console's signed-in sessions (`ConsoleSessions` holds one behind a lock): random ids, each
/// with its CSRF token and its expiry. A session ends `idleLifetime` seconds after its last use,
/// and `maxLifetime` after sign-in whatever its use; at most `capacity` live at once (a new one
/// replaces the one that expires first). No clock or randomness of its own: both are passed in.
struct ConsoleSessionTable: Sendable {
    struct Session: Sendable, Equatable {
        let csrfToken: String
        let createdAt: Timestamp
        var lastUsed: Timestamp
    }

    /// What a request's session cookie and CSRF header amount to.
    enum Check: Equatable {
        /// A live session, and the request's CSRF header is its token.
        case valid
        /// A live session, but the CSRF header is missing or not its token.
        case badCSRF
        /// No such session, or it expired.
        case unknown
    }

    let idleLifetime: Double
    let maxLifetime: Double
    let capacity: Int
    private(set) var sessions: [String: Session] = [:]

    init(idleLifetime: Double, maxLifetime: Double, capacity: Int) {
        self.idleLifetime = idleLifetime
        self.maxLifetime = maxLifetime
        self.capacity = capacity
    }

    /// When `session` ends, if it is not used again.
    func expiry(of session: Session) -> Timestamp {
        min(session.lastUsed + idleLifetime, session.createdAt + maxLifetime)
    }

    /// Adds a session `id` with `csrfToken`, first dropping the expired ones and, when full, the
    /// one that would end first.
    mutating func add(id: String, csrfToken: String, now: Timestamp) {
        removeExpired(now: now)
        if sessions.count >= capacity, let oldest = sessions.min(by: { expiry(of: $0.value) < expiry(of: $1.value) })?.key {
            sessions[oldest] = nil
        }
        sessions[id] = Session(csrfToken: csrfToken, createdAt: now, lastUsed: now)
    }

    /// The live session `id` (nil when unknown or expired; an expired one is removed), its last
    /// use moved to `now` when `touch`.
    mutating func session(_ id: String, now: Timestamp, touch: Bool) -> Session? {
        guard var session = sessions[id] else { return nil }
        guard now < expiry(of: session) else {
            sessions[id] = nil
            return nil
        }
        if touch {
            session.lastUsed = now
            sessions[id] = session
        }
        return session
    }

    /// Checks a request's session `id` and CSRF header; a valid one counts as a use.
    mutating func check(_ id: String, csrf: String?, now: Timestamp, equal: (String, String) -> Bool) -> Check {
        guard let session = session(id, now: now, touch: false) else { return .unknown }
        guard let csrf, equal(csrf, session.csrfToken) else { return .badCSRF }
        _ = self.session(id, now: now, touch: true)
        return .valid
    }

    mutating func remove(_ id: String) { sessions[id] = nil }

    private mutating func removeExpired(now: Timestamp) {
        sessions = sessions.filter { now < expiry(of: $0.value) }
    }
}
