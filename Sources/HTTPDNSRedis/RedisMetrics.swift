import HTTPDNSCore
import Synchronization

/// What every Redis connection of the process records, by purpose: whether it is up, its
/// command errors by code, its command latencies; and the shared answer tier's results. Changes
/// of state and errors take one short lock; a command's latency and a tier's result, recorded
/// for every command from every HTTP thread, are striped counters reached without a lookup
/// (`DurationHistograms`, `StripedCounter`). Read at scrape time.
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

    /// The shared answer tier's results, each counted apart.
    enum AnswerResult: Int, CaseIterable {
        case hit, hitAfterWait, missLocked, waitTimeout, error, stored

        /// The `result` label.
        var name: String {
            switch self {
            case .hit: "hit"
            case .hitAfterWait: "hit_after_wait"
            case .missLocked: "miss_locked"
            case .waitTimeout: "wait_timeout"
            case .error: "error"
            case .stored: "stored"
            }
        }
    }

    private let purposes = Mutex<[String: Purpose]>([:])
    /// Each purpose's command latencies (slot 0), made when it registers.
    private let latencies = Mutex<[String: DurationHistograms]>([:])
    /// One counter per `AnswerResult`, by its raw value, sharing their stripes' lines.
    private let answers = StripedCounter.group(AnswerResult.allCases.count)

    public init() {}

    /// A snapshot, by purpose.
    public var snapshot: [String: Purpose] {
        var snapshot = purposes.withLock { $0 }
        for (purpose, histograms) in latencies.withLock({ $0 }) {
            snapshot[purpose, default: Purpose()].latency = histograms.counts(0) ?? HistogramCounts()
        }
        return snapshot
    }

    /// The shared answer tier's lookups and stores by result (`hit`, `hit_after_wait`,
    /// `miss_locked`, `wait_timeout`, `error`, `stored`); a result that never happened is absent.
    public var answerResults: [String: UInt64] {
        var results: [String: UInt64] = [:]
        for result in AnswerResult.allCases {
            let count = answers[result.rawValue].value
            if count > 0 { results[result.name] = count }
        }
        return results
    }

    func recordAnswer(_ result: AnswerResult) {
        answers[result.rawValue].increment()
    }

    /// Registers `purpose` and returns where its commands' latencies go: the connection keeps it,
    /// so that a reply records its round trip with no lookup and no lock.
    func register(_ purpose: String) -> DurationHistograms {
        purposes.withLock { if $0[purpose] == nil { $0[purpose] = Purpose() } }
        return latencies.withLock { latencies in
            if let existing = latencies[purpose] { return existing }
            let histograms = DurationHistograms(slots: 1)
            latencies[purpose] = histograms
            return histograms
        }
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
}
