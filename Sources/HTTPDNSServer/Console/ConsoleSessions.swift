import HTTPDNSCore
import Synchronization

/// The console's sessions, in memory only (a restart signs everyone out): the locked shell of
/// `ConsoleSessionTable`, with the clock and the random ids. Safe from any thread.
final class ConsoleSessions: Sendable {
    /// The cookie that carries a session id.
    static let cookieName = "httpdnsd_console"
    /// The request header that carries the session's CSRF token.
    static let csrfHeader = "X-CSRF-Token"
    /// A session ends after 30 minutes without a request, and 12 hours after sign-in.
    static let idleLifetime = 1800.0
    static let maxLifetime = 43_200.0
    /// Sessions kept at once; signing in beyond ends the one closest to its end.
    static let capacity = 256

    private let clock: any WallClock
    private let locked_table: Mutex<ConsoleSessionTable>

    init(clock: any WallClock) {
        self.clock = clock
        locked_table = Mutex(
            ConsoleSessionTable(idleLifetime: Self.idleLifetime, maxLifetime: Self.maxLifetime, capacity: Self.capacity))
    }

    /// A new session: its id (the cookie's value) and its CSRF token, 256 random bits each
    /// (`SystemRandomNumberGenerator`: the kernel's `getrandom`).
    func create() -> (id: String, csrfToken: String) {
        let id = Self.randomToken(), csrf = Self.randomToken()
        let now = clock.now()
        locked_table.withLock { $0.add(id: id, csrfToken: csrf, now: now) }
        return (id, csrf)
    }

    /// The CSRF token of the live session `id`, nil when there is none.
    func csrfToken(of id: String) -> String? {
        let now = clock.now()
        return locked_table.withLock { $0.session(id, now: now, touch: true)?.csrfToken }
    }

    /// Whether the session `id` is live and `csrf` is its token (compared in constant time).
    func check(_ id: String, csrf: String?) -> ConsoleSessionTable.Check {
        let now = clock.now()
        return locked_table.withLock { $0.check(id, csrf: csrf, now: now, equal: Self.constantTimeEquals) }
    }

    func end(_ id: String) {
        locked_table.withLock { $0.remove(id) }
    }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for _ in 0..<4 {
            let word = generator.next() as UInt64
            for shift in stride(from: 60, through: 0, by: -4) { text.append(digits[Int((word >> UInt64(shift)) & 0xf)]) }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Equal texts, in a time that depends on their lengths only.
    static func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8), b = Array(rhs.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

extension ConsoleSessions {
    /// Sessions held, live or not yet removed.
    var count: Int { locked_table.withLock { $0.sessions.count } }
}
