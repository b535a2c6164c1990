import HTTPDNSCore
import Synchronization

/// Responses by endpoint and status code, for `httpdns_http_requests_total{endpoint,code}`:
/// probes, scrapes and the admin API apart from clients. Every response counts here from every
/// HTTP thread, so each endpoint's common statuses are striped counters (`StripedSlots`, a
/// block per endpoint allocated when first used); other statuses share one lock.
public final class HTTPMetrics: Sendable {
    /// The statuses this service answers with; others are counted under a lock.
    private static let common = [200, 201, 202, 400, 401, 403, 404, 405, 413, 429, 431, 500, 502, 503, 504]
    /// The endpoint labels (`RouteTable.endpoints`), by `HTTPResponse.endpoint`.
    private let endpoints = RouteTable.standard.endpoints
    private let counters: StripedSlots
    /// The same as `record` reaches them (no retain).
    private let unretained: Unmanaged<StripedSlots>
    private let otherStatuses = Mutex<[Key: UInt64]>([:])

    struct Key: Hashable, Comparable {
        var endpoint: Int
        var status: Int

        static func < (lhs: Key, rhs: Key) -> Bool { (lhs.endpoint, lhs.status) < (rhs.endpoint, rhs.status) }
    }

    public init() {
        counters = StripedSlots(slots: endpoints.count, width: Self.common.count)
        unretained = .passUnretained(counters)
    }

    /// Counts one response of `endpoint` (an index of `RouteTable.endpoints`).
    @inline(__always)
    func record(status: Int, endpoint: Int) {
        if let index = Self.index(status) {
            unretained._withUnsafeGuaranteedRef { $0.add(1, slot: endpoint, index: index) }
        } else if (100...599).contains(status) {
            otherStatuses.withLock { $0[Key(endpoint: endpoint, status: status), default: 0] += 1 }
        }
    }

    /// A 200 of the fast path, on `endpoint`.
    @inline(__always)
    func recordFastHit(endpoint: Int) {
        unretained._withUnsafeGuaranteedRef { $0.add(1, slot: endpoint, index: 0) }
    }

    @inline(__always)
    private static func index(_ status: Int) -> Int? {
        switch status {
        case 200: 0
        case 201: 1
        case 202: 2
        case 400: 3
        case 401: 4
        case 403: 5
        case 404: 6
        case 405: 7
        case 413: 8
        case 429: 9
        case 431: 10
        case 500: 11
        case 502: 12
        case 503: 13
        case 504: 14
        default: nil
        }
    }

    /// Non-zero counters by endpoint label and status, sorted by endpoint (table order), then status.
    var snapshot: [(endpoint: String, status: Int, count: UInt64)] {
        var values = otherStatuses.withLock { $0 }
        for endpoint in endpoints.indices {
            guard let totals = counters.totals(endpoint) else { continue }
            for (index, status) in Self.common.enumerated() where totals[index] > 0 {
                values[Key(endpoint: endpoint, status: status)] = totals[index]
            }
        }
        return values.sorted { $0.key < $1.key }.map { (endpoints[$0.key.endpoint], $0.key.status, $0.value) }
    }

    /// Responses by status, whatever the endpoint, sorted.
    public var byStatus: [(Int, UInt64)] {
        var totals: [Int: UInt64] = [:]
        for entry in snapshot { totals[entry.status, default: 0] &+= entry.count }
        return totals.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
