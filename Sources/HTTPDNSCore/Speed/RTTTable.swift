import Synchronization

/// What the speed test learned about each IP address, remembered across answers and refreshes so
/// that every answer holding an address is ordered by it, until the measurement expires.
///
/// Bounded: holds at most `capacity` addresses and forgets the one measured longest ago to make
/// room. Times are the caller's wall-clock `Timestamp`s (the engine passes its `WallClock`'s `now()`),
/// so expiry is tested with a manual clock. Safe to use from any thread; each call is one short
/// critical section.
public final class RTTTable: Sendable {
    /// The default bound on remembered addresses.
    public static let defaultCapacity = 100_000
    /// The default lifetime of one measurement, in seconds.
    public static let defaultTTL: Double = 600

    /// One remembered probe result and when it was taken.
    private struct Measurement {
        var result: ProbeResult
        var measuredAt: Timestamp
    }

    /// How many addresses are remembered at most.
    public let capacity: Int
    /// Seconds a measurement stays valid after it was recorded.
    public let ttl: Double
    /// Keyed by address text; `set` makes an entry the newest, so eviction drops the oldest
    /// measurement (reads use `peek` and do not change that order).
    private let measurements: Mutex<LRUCache<String, Measurement>>

    /// - Parameters:
    ///   - capacity: addresses remembered at most (at least 0; 0 remembers nothing).
    ///   - ttl: seconds a measurement stays valid (a measurement taken at `t` is used while
    ///     `now < t + ttl`).
    public init(capacity: Int = RTTTable.defaultCapacity, ttl: Double = RTTTable.defaultTTL) {
        self.capacity = max(0, capacity)
        self.ttl = ttl
        measurements = Mutex(LRUCache(capacity: max(0, capacity)))
    }

    /// How many addresses are remembered (expired ones included until they are evicted or read).
    public var count: Int {
        measurements.withLock { $0.count }
    }

    /// Remembers one probe's results (one per address, as a `SpeedTester` reports them), replacing
    /// older measurements of the same addresses.
    public func record(_ results: [String: ProbeResult], at now: Timestamp) {
        measurements.withLock { table in
            for (address, result) in results {
                table.set(Measurement(result: result, measuredAt: now), for: address)
            }
        }
    }

    /// The unexpired measurement of `address`, or nil (never measured, expired or evicted). An
    /// expired measurement is forgotten here.
    public func result(for address: String, at now: Timestamp) -> ProbeResult? {
        measurements.withLock { table in
            current(address, in: &table, at: now)
        }
    }

    /// True when at least one of `addresses` has no unexpired measurement, so probing them would
    /// teach something. False for an empty list.
    public func needsProbe(_ addresses: [String], at now: Timestamp) -> Bool {
        measurements.withLock { table in
            addresses.contains { current($0, in: &table, at: now) == nil }
        }
    }

    /// `addresses` fastest first: reachable ones by ascending RTT, then those without an
    /// unexpired measurement, then unreachable ones. Stable: ties (equal RTTs, and within the last
    /// two groups) keep the order they came in. Duplicates are kept.
    public func order(_ addresses: [String], at now: Timestamp) -> [String] {
        guard addresses.count > 1 else { return addresses }
        let known = measurements.withLock { table in
            addresses.map { current($0, in: &table, at: now) }
        }
        return Self.order(addresses, results: known)
    }

    /// The ordering rule of ``order(_:at:)`` over results already looked up (`results[i]` is the
    /// measurement of `addresses[i]`, nil when unknown).
    static func order(_ addresses: [String], results: [ProbeResult?]) -> [String] {
        /// Group 0 reachable (keyed by RTT), 1 unknown, 2 unreachable.
        func rank(_ result: ProbeResult?) -> (group: Int, seconds: Double) {
            switch result {
            case .reachable(let seconds)?: (0, seconds.isNaN ? .infinity : seconds)
            case nil: (1, 0)
            case .unreachable?: (2, 0)
            }
        }
        let ranked = zip(addresses, results).enumerated().map { position, pair in
            (address: pair.0, rank: rank(pair.1), position: position)
        }
        return ranked.sorted { left, right in
            if left.rank.group != right.rank.group { return left.rank.group < right.rank.group }
            if left.rank.seconds != right.rank.seconds { return left.rank.seconds < right.rank.seconds }
            return left.position < right.position
        }.map(\.address)
    }

    /// Forgets every measurement.
    public func removeAll() {
        measurements.withLock { $0.removeAll() }
    }

    /// The unexpired result for `address`; drops an expired one.
    private func current(_ address: String, in table: inout LRUCache<String, Measurement>, at now: Timestamp) -> ProbeResult? {
        guard let measurement = table.peek(address) else { return nil }
        guard now < measurement.measuredAt + ttl else {
            table.removeValue(for: address)
            return nil
        }
        return measurement.result
    }
}
