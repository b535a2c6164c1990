import HTTPDNSCore
import Synchronization

/// Per-client request rate (`rateLimit`, `rateBurst`): a token bucket per (account, client
/// address), in `stripes` `ClientBucketTable`s each behind its own `Mutex`, so HTTP threads
/// checking different clients rarely meet on a lock.
///
/// A check is one hash of the account id and the address (`Hasher`, seeded per process, so a
/// client cannot choose colliding keys), one short critical section, and no allocation.
/// Threads: any.
public final class ClientRateLimiter: @unchecked Sendable {
    /// The limits one request is checked against.
    public struct Rate: Sendable, Equatable {
        /// Requests per second; 0 is no limit.
        public var perSecond: Double
        /// Requests at once; 0 is twice `perSecond` (at least 1).
        public var burst: Int

        public init(perSecond: Double, burst: Int) {
            self.perSecond = perSecond
            self.burst = burst
        }

        public var isLimited: Bool { perSecond > 0 }

        /// The bucket size in tokens.
        var burstTokens: Double { burst > 0 ? Double(burst) : max(1, (2 * perSecond).rounded(.up)) }
    }

    /// Clients tracked at once (all stripes together) by default: 16 bytes each, 1 MiB.
    public static let defaultCapacity = 1 << 16
    private static let stripes = 64
    /// The stripes' tables; `locked_` because the stripe's `Mutex` sits beside each.
    private let locked_tables: UnsafeMutablePointer<Mutex<ClientBucketTable>>
    private let clock: any WallClock

    public init(capacity: Int = ClientRateLimiter.defaultCapacity, clock: any WallClock = SystemClock()) {
        self.clock = clock
        locked_tables = .allocate(capacity: Self.stripes)
        let perStripe = max(ClientBucketTable.probeWindow, capacity / Self.stripes)
        for index in 0..<Self.stripes {
            (locked_tables + index).initialize(to: Mutex(ClientBucketTable(capacity: perStripe)))
        }
    }

    deinit {
        locked_tables.deinitialize(count: Self.stripes)
        locked_tables.deallocate()
    }

    /// Takes a token for a client of `account` (its id's bytes; empty for requests to no known
    /// account) at `address`. The caller checks `rate.isLimited` first.
    public func take(account: UnsafeRawBufferPointer, address: PeerAddress, rate: Rate) -> TokenBucket.Decision {
        let key = Self.key(account: account, address: address)
        let now = clock.now()
        let burst = rate.burstTokens
        return locked_tables[Self.stripe(key)].withLock { $0.take(key, at: now, rate: rate.perSecond, burst: burst) }
    }

    /// Gives back the token a `take` with the same arguments took (the fast path takes before
    /// its cache lookup and refunds on a miss, which the general path then charges).
    public func refund(account: UnsafeRawBufferPointer, address: PeerAddress, rate: Rate) {
        let key = Self.key(account: account, address: address)
        let now = clock.now()
        locked_tables[Self.stripe(key)].withLock { $0.refund(key, at: now, rate: rate.perSecond) }
    }

    /// The table key of a client of an account: never 0 (the table's empty mark).
    private static func key(account: UnsafeRawBufferPointer, address: PeerAddress) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(bytes: account)
        hasher.combine(account.count)
        hasher.combine(address)
        let key = UInt64(truncatingIfNeeded: hasher.finalize())
        return key == 0 ? 1 : key
    }

    /// The top bits of a key pick the stripe, the low bits the slot in it.
    private static func stripe(_ key: UInt64) -> Int { Int(truncatingIfNeeded: key >> 58) & (stripes - 1) }

    /// The same with the account id as a `String`.
    public func take(account: String, address: PeerAddress, rate: Rate) -> TokenBucket.Decision {
        var id = account
        return id.withUTF8 { take(account: UnsafeRawBufferPointer($0), address: address, rate: rate) }
    }

    /// Clients with a bucket not yet full, and clients forgotten before their bucket was full.
    public var occupancy: (active: Int, evictedEarly: UInt64) {
        let now = clock.now()
        var active = 0
        var evicted: UInt64 = 0
        for index in 0..<Self.stripes {
            locked_tables[index].withLock {
                active += $0.activeCount(at: now)
                evicted &+= $0.evictedEarly
            }
        }
        return (active, evicted)
    }
}
