/// The statistics record of one (domain, family, network), as the SDK's `getRequestReportInfo`
/// spells it (WIRE-FORMATS §4). A plain value; `StatsRecorder` owns and locks them.
public struct DomainStats: Sendable, Equatable {
    public var successNum: UInt64 = 0
    public var cacheDnsNum: UInt64 = 0
    public var requestPDnsNum: UInt64 = 0
    public var gobackLocaldnsNum: UInt64 = 0
    public var localErro: UInt64 = 0
    public var timeoutErro: UInt64 = 0
    public var noResponseErro: UInt64 = 0
    public var noPermissionErro: UInt64 = 0
    public var urlParameterErro: UInt64 = 0
    public var urlPathErro: UInt64 = 0
    /// Answers served from an expired entry (reuse of expired IPs, serve-stale on failure).
    public var staleNum: UInt64 = 0
    /// Background refreshes started before a client needed them (refresh-ahead, scheduled
    /// prefetch, refresh on demand).
    public var prefetchNum: UInt64 = 0
    /// Answers given by one of the account's `rules` (docs/rules.md) rather than resolved.
    public var ruleNum: UInt64 = 0
    /// Sum and count of resolution times (ms) for `avgRtt`; the maximum for `maxRtt`.
    public var rttTotalMilliseconds: Double = 0
    public var rttCount: UInt64 = 0
    public var maxRttMilliseconds: Double = 0

    public init() {}

    /// Average resolution time in whole milliseconds, as the SDK's string.
    public var avgRtt: String { rttCount == 0 ? "0" : String(Int((rttTotalMilliseconds / Double(rttCount)).rounded())) }
    public var maxRtt: String { String(Int(maxRttMilliseconds.rounded())) }

    /// Counts one upstream attempt and, on failure, the counter its error feeds.
    public mutating func recordUpstream(_ reply: ReplySummary) {
        requestPDnsNum += 1
        guard case .failed(let error) = reply else { return }
        switch error.code {
        case .timeout: timeoutErro += 1
        case .permission: noPermissionErro += 1
        case .badRequest: urlParameterErro += 1
        case .notFound: urlPathErro += 1
        case .transport, .httpStatus, .malformed, .serverFailure: noResponseErro += 1
        }
    }

    public mutating func recordRTT(seconds: Double) {
        let milliseconds = seconds * 1000
        rttTotalMilliseconds += milliseconds
        rttCount += 1
        maxRttMilliseconds = max(maxRttMilliseconds, milliseconds)
    }
}

/// The key of a statistics record. Its hash is computed once, when the key is made: a miss
/// updates its record twice (the upstream's reply, then the answer).
public struct StatsKey: Hashable, Sendable, Comparable {
    public let domain: String
    public let family: RecordFamily
    public let network: String
    /// The hash of the three, which `StatsTable` places the record by: the `cacheHash` of the
    /// cache key whose events the record counts (`defaultNetwork` standing for the cache's ""),
    /// so that a key made from a `CacheKey` takes that key's hash instead of hashing again.
    let tableHash: Int

    public init(domain: String, family: RecordFamily, network: String) {
        let hash = CacheKey.cacheHash(host: domain, family: family, network: Self.cacheNetwork(network))
        self.init(domain: domain, family: family, network: network, tableHash: hash)
    }

    /// The record a cache key's events go to.
    public init(_ key: CacheKey) {
        // A cache network spelled like the record's default one hashes as itself in the cache
        // but as "" here: that rare key is hashed again.
        guard key.network != Self.defaultNetwork else {
            self.init(domain: key.host.value, family: key.family, network: key.network)
            return
        }
        let network = key.network.isEmpty ? Self.defaultNetwork : key.network
        self.init(domain: key.host.value, family: key.family, network: network, tableHash: key.cacheHash)
    }

    /// A key with the hash given (the tests give two keys one hash).
    init(domain: String, family: RecordFamily, network: String, tableHash: Int) {
        self.domain = domain
        self.family = family
        self.network = network
        self.tableHash = tableHash
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(tableHash)
    }

    public static func == (lhs: StatsKey, rhs: StatsKey) -> Bool {
        lhs.tableHash == rhs.tableHash && lhs.family == rhs.family && lhs.domain == rhs.domain && lhs.network == rhs.network
    }

    public static func < (lhs: StatsKey, rhs: StatsKey) -> Bool {
        (lhs.domain, lhs.family.rawValue, lhs.network) < (rhs.domain, rhs.family.rawValue, rhs.network)
    }
}
