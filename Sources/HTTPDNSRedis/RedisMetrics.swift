import HTTPDNSCore
import Synchronization

/// What every Redis connection of the process records, by purpose: whether it is up, its
/// command errors by code, its command latencies. Recorded on the connections' loop threads
/// (one short lock each), read at scrape time.
public final class RedisMetrics: Sendable {
    /// One purpose's figures.
    public struct Purpose: Sendable, Equatable {
        public var up = false
        /// Errors by `RedisError.Code.name`.
        public var errors: [String: UInt64] = [:]
        /// Round-trip time of every command that got a reply (error replies included).
        public var latency = HistogramCounts()
        /// The connections of the purpose that ride on HTTP threads (`RedisLocalConnection`),
        /// and how many of them are ready.
        public var threadConnections = 0
        public var threadConnectionsUp = 0
    }

    private let purposes = Mutex<[String: Purpose]>([:])
    private let answers = Mutex<[String: UInt64]>([:])

    public init() {}

    /// A snapshot, by purpose.
    public var snapshot: [String: Purpose] { purposes.withLock { $0 } }

    /// The shared answer tier's lookups and stores by result (`hit`, `hit_after_wait`,
    /// `miss_locked`, `wait_timeout`, `error`, `stored`).
    public var answerResults: [String: UInt64] { answers.withLock { $0 } }

    func recordAnswer(_ result: String) {
        answers.withLock { $0[result, default: 0] += 1 }
    }

    func register(_ purpose: String) {
        purposes.withLock { if $0[purpose] == nil { $0[purpose] = Purpose() } }
    }

    func setUp(_ purpose: String, _ up: Bool) {
        purposes.withLock { $0[purpose, default: Purpose()].up = up }
    }

    /// An HTTP thread opened a connection of its own for `purpose`.
    func addThreadConnection(_ purpose: String) {
        purposes.withLock { $0[purpose, default: Purpose()].threadConnections += 1 }
    }

    /// An HTTP thread's connection became ready (`up`) or went down.
    func setThreadConnectionUp(_ purpose: String, _ up: Bool) {
        purposes.withLock { $0[purpose, default: Purpose()].threadConnectionsUp += up ? 1 : -1 }
    }

    /// An HTTP thread's connection is gone; `wasUp` when it was counted ready.
    func removeThreadConnection(_ purpose: String, wasUp: Bool) {
        purposes.withLock {
            $0[purpose, default: Purpose()].threadConnections -= 1
            if wasUp { $0[purpose, default: Purpose()].threadConnectionsUp -= 1 }
        }
    }

    func recordError(_ purpose: String, _ code: RedisError.Code) {
        purposes.withLock { $0[purpose, default: Purpose()].errors[code.name, default: 0] += 1 }
    }

    func recordLatency(_ purpose: String, nanoseconds: UInt64) {
        purposes.withLock { $0[purpose, default: Purpose()].latency.record(nanoseconds: nanoseconds) }
    }
}
