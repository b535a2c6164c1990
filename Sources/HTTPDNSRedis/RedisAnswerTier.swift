import Dispatch
import Foundation
import HTTPDNSCore
import HTTPDNSLoop

/// The shared answer tier in Redis (docs/redis.md): answers under
/// `<prefix>answer:<account>:<family>:<host>[:<network>]`, kept for their TTL plus the stale
/// window; a lock `...:lock` (`SET NX PX`) held by the one replica resolving a name upstream
/// while the others poll for its answer.
///
/// A miss resolved upstream costs Redis two round trips of two plain commands each, no script:
/// the lookup (`SET <lock> NX PX`, `GET <answer>`) and the store (`SET <answer> PX`, `DEL
/// <lock>`). Every Redis command is bounded by `redisTimeout`; any failure is a miss without the
/// lock, so the engine goes to its upstreams as it would without Redis.
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

    /// Deletes the lock only when this replica holds it: after a resolution that gave nothing
    /// to store, another replica that took an expired lock keeps it.
    static let releaseScript = RedisScript(
        """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
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
        let replies = RedisLookupReplies { [self] lock, answer in
            switch RedisAnswerLookup.decide(lock: lock, answer: answer, fresh: fresh) {
            case .found(let entry, let releaseLock):
                if releaseLock { connection.command([Self.del, lockKey]) { _ in } }
                metrics.recordAnswer(.hit)
                completion(.found(entry))
            case .locked:
                metrics.recordAnswer(.missLocked)
                completion(.miss(holdsLock: true))
            case .wait:
                poll(
                    answerKey: answerKey, lockKey: lockKey, lockMilliseconds: lockMilliseconds, deadline: deadline(wait),
                    completion: completion)
            case .error:
                metrics.recordAnswer(.error)
                completion(.miss(holdsLock: false))
            }
        }
        // Sent back to back (one write when the connection is ready) and answered in order. The
        // lock is asked for first, so that an answer stored between the two is still read.
        connection.command([Self.set, lockKey, token, Self.nx, Self.px, lockMilliseconds]) { replies.lockReplied($0) }
        connection.command([Self.get, answerKey]) { replies.answerReplied($0) }
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

    /// The answer's `SET ... PX`; when this replica holds the lock, followed by `DEL` of the
    /// lock in the same write. The lock is deleted whoever holds it by then (this replica's may
    /// have expired and been taken by another): with the answer stored, no replica needs it, as
    /// every lookup reads the answer.
    public func store(account: String, key: CacheKey, entry: CacheEntry, keepSeconds: Double, holdsLock: Bool) {
        let answerKey = keys.answerBytes(account: account, key: key)
        let milliseconds = Self.decimal(max(1, Int(min(keepSeconds, 31_536_000 * 2) * 1000)))
        // Errors are counted by the connection's metrics; nobody waits for these.
        connection.command([Self.set, answerKey, SharedAnswerCodec.encode(entry), Self.px, milliseconds]) { _ in }
        if holdsLock { connection.command([Self.del, RedisKeys.lock(ofAnswer: answerKey)]) { _ in } }
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
    private static let get = Array("GET".utf8)
    private static let del = Array("DEL".utf8)
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
