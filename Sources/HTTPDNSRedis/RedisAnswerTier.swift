import Dispatch
import Foundation
import HTTPDNSCore
import HTTPDNSLoop

/// The shared answer tier in Redis (docs/redis.md): answers under
/// `<prefix>answer:<account>:<family>:<host>[:<network>]`, kept for their TTL plus the stale
/// window; a lock `...:lock` (`SET NX PX`) held by the one replica resolving a name upstream
/// while the others poll for its answer.
///
/// A miss resolved upstream costs Redis two commands, both scripts called by SHA-1 (`EVALSHA`):
/// the lookup, which takes the lock, and the store-and-release. Every Redis command is bounded
/// by `redisTimeout`; any failure is a miss without the lock, so the engine goes to its
/// upstreams as it would without Redis.
public final class RedisAnswerTier: SharedAnswerTier {
    private let connection: RedisConnection
    private let keys: RedisKeys
    private let metrics: RedisMetrics
    private let clock: any WallClock
    /// This process's lock token (host, pid, random): only the holder releases a lock.
    public let replicaID: String
    private let token: [UInt8]
    /// Longest a replica waits for another's answer, whatever the account's timeout.
    private let maximumWait: Double
    /// Between two looks at a lock holder's answer.
    private let pollInterval: Double
    /// Whether the URL's host is an IP address (connecting then looks nothing up).
    private let hostIsAddress: Bool

    /// One `GET`, or `SET NX PX` of the lock when there is no answer: one round trip for a miss.
    /// Returns the answer (bulk), 1 (the lock is ours) or 0 (another replica holds it).
    static let lookupScript = RedisScript(
        """
        local v = redis.call('GET', KEYS[1])
        if v then return v end
        if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
        return 0
        """)
    /// Deletes the lock only when this replica holds it.
    static let releaseScript = RedisScript(
        """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """)
    /// The lock holder's write-back in one round trip: `SET answer PX`, then the release (the
    /// lock deleted only if it still holds this replica's token: it may have expired and been
    /// taken by another replica meanwhile).
    static let storeAndReleaseScript = RedisScript(
        """
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        if redis.call('GET', KEYS[2]) == ARGV[3] then return redis.call('DEL', KEYS[2]) end
        return 0
        """)

    public init(client: RedisClient, clock: any WallClock = SystemClock(), maximumWait: Double = 1, pollInterval: Double = 0.01) {
        connection = client.connection("answers")
        hostIsAddress = IPAddress(client.url.host) != nil
        keys = client.keys
        metrics = client.metrics
        self.clock = clock
        self.maximumWait = maximumWait
        self.pollInterval = pollInterval
        replicaID = "\(ProcessInfo.processInfo.hostName):\(getpid()):\(UInt32.random(in: 0...UInt32.max))"
        token = Array(replicaID.utf8)
    }

    public func lookup(
        account: String, key: CacheKey, waitMilliseconds: Int, completion: @escaping @Sendable (SharedLookupResult) -> Void
    ) {
        let answerKey = keys.answerBytes(account: account, key: key)
        let lockKey = RedisKeys.lock(ofAnswer: answerKey)
        let wait = min(maximumWait, Double(max(0, waitMilliseconds)) / 1000)
        let lockMilliseconds = Self.decimal(Int(wait * 2000) + 500)
        let metrics = metrics
        connection.evaluate(Self.lookupScript, keys: [answerKey, lockKey], arguments: [token, lockMilliseconds]) { [self] result in
            switch result {
            case .success(.bulk(let bytes)):
                if let entry = fresh(bytes) {
                    metrics.recordAnswer(.hit)
                    completion(.found(entry))
                } else {
                    // Expired (kept for stale serving) or unreadable: resolve, under the lock if free.
                    takeLock(
                        lockKey, answerKey: answerKey, lockMilliseconds: lockMilliseconds, deadline: deadline(wait), completion: completion)
                }
            case .success(.integer(1)):
                metrics.recordAnswer(.missLocked)
                completion(.miss(holdsLock: true))
            case .success(.integer(0)):
                poll(
                    answerKey: answerKey, lockKey: lockKey, lockMilliseconds: lockMilliseconds, deadline: deadline(wait),
                    completion: completion)
            case .success, .failure:
                metrics.recordAnswer(.error)
                completion(.miss(holdsLock: false))
            }
        }
    }

    /// A connection of the tier's that rides on the calling thread's event loop (an HTTP
    /// thread; `sockets` is its epoll set): the lookups and stores of the misses this thread
    /// reads go out and are answered here (``RedisConnection/localConnection(on:)``). Call it on
    /// that thread. Nil when the URL's host is a name, not an address: each connection attempt
    /// would look it up (`getaddrinfo`, which blocks) on the HTTP thread; the tier's own thread
    /// serves every thread's misses then.
    package func localConnection(on sockets: EpollSet) -> (any LoopGuest)? {
        guard hostIsAddress else { return nil }
        return connection.localConnection(on: sockets)
    }

    /// One command: the answer `SET ... PX`, or, when this replica holds the lock, the
    /// store-and-release script, which also deletes the lock if it is still ours.
    public func store(account: String, key: CacheKey, entry: CacheEntry, keepSeconds: Double, holdsLock: Bool) {
        let answerKey = keys.answerBytes(account: account, key: key)
        let milliseconds = Self.decimal(max(1, Int(min(keepSeconds, 31_536_000 * 2) * 1000)))
        let value = SharedAnswerCodec.encode(entry)
        // Errors are counted by the connection's metrics; nobody waits for these.
        if holdsLock {
            connection.evaluate(
                Self.storeAndReleaseScript, keys: [answerKey, RedisKeys.lock(ofAnswer: answerKey)], arguments: [value, milliseconds, token]
            ) { _ in }
        } else {
            connection.command([Self.set, answerKey, value, Self.px, milliseconds]) { _ in }
        }
        metrics.recordAnswer(.stored)
    }

    public func release(account: String, key: CacheKey) {
        connection.evaluate(Self.releaseScript, keys: [keys.answerLock(account: account, key: key)], arguments: [token]) { _ in }
    }

    /// The entry in `bytes` if it decodes and has not expired.
    private func fresh(_ bytes: [UInt8]) -> CacheEntry? {
        guard let entry = SharedAnswerCodec.decode(bytes), !entry.isExpired(at: clock.now()) else { return nil }
        return entry
    }

    private func deadline(_ wait: Double) -> Double { MonotonicSeconds.now() + wait }

    /// `value` (not negative) in decimal digits, as a command's argument.
    private static func decimal(_ value: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendDecimal(value)
        return bytes
    }

    /// The command names and options the tier sends, as bytes made once.
    private static let set = Array("SET".utf8)
    private static let mget = Array("MGET".utf8)
    private static let nx = Array("NX".utf8)
    private static let px = Array("PX".utf8)

    private func takeLock(
        _ lockKey: [UInt8], answerKey: [UInt8], lockMilliseconds: [UInt8], deadline: Double,
        completion: @escaping @Sendable (SharedLookupResult) -> Void
    ) {
        connection.command([Self.set, lockKey, token, Self.nx, Self.px, lockMilliseconds]) { [self] result in
            switch result {
            case .success(.status("OK")):
                metrics.recordAnswer(.missLocked)
                completion(.miss(holdsLock: true))
            case .success(.null):
                poll(answerKey: answerKey, lockKey: lockKey, lockMilliseconds: lockMilliseconds, deadline: deadline, completion: completion)
            case .success, .failure:
                metrics.recordAnswer(.error)
                completion(.miss(holdsLock: false))
            }
        }
    }

    /// Another replica holds the lock: looks for its answer every `pollInterval` until the
    /// deadline. When the lock is gone without an answer (its holder failed or died), this
    /// replica tries to take it over; past the deadline it resolves on its own.
    private func poll(
        answerKey: [UInt8], lockKey: [UInt8], lockMilliseconds: [UInt8], deadline: Double,
        completion: @escaping @Sendable (SharedLookupResult) -> Void
    ) {
        guard MonotonicSeconds.now() < deadline else {
            metrics.recordAnswer(.waitTimeout)
            completion(.miss(holdsLock: false))
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + pollInterval) { [self] in
            connection.command([Self.mget, answerKey, lockKey]) { [self] result in
                guard case .success(.array(let values)) = result, values.count == 2 else {
                    metrics.recordAnswer(.error)
                    completion(.miss(holdsLock: false))
                    return
                }
                if let bytes = values[0].bytes, let entry = fresh(bytes) {
                    metrics.recordAnswer(.hitAfterWait)
                    completion(.found(entry))
                } else if values[1] == .null {
                    takeLock(lockKey, answerKey: answerKey, lockMilliseconds: lockMilliseconds, deadline: deadline, completion: completion)
                } else {
                    poll(
                        answerKey: answerKey, lockKey: lockKey, lockMilliseconds: lockMilliseconds, deadline: deadline,
                        completion: completion)
                }
            }
        }
    }
}

/// Seconds on CLOCK_MONOTONIC, for the wait deadlines.
enum MonotonicSeconds {
    static func now() -> Double { Double(MonotonicClock.nanoseconds()) / 1e9 }
}
