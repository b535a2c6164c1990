/// An answer as handed to a client: the addresses with their remaining lifetime.
public struct ResolvedAnswer: Sendable, Equatable {
    public var addressList: AddressList
    /// Seconds left before expiry (0 for stale and uncached answers).
    public var ttl: UInt32
    /// TTL the answer was stored with (after the account's caps).
    public var originTTL: UInt32
    public var source: AnswerSource
    public var stale: Bool
    public var nxdomain: Bool
    /// The addresses are not the upstream's: DNS64 made them from the name's A records under the
    /// account's `dns64Prefix` (`DNS64Prefix.synthesized`). v1 and DoH JSON answers say so.
    public var synthesized = false

    public init(
        addresses: [String], ttl: UInt32, originTTL: UInt32, source: AnswerSource, stale: Bool = false, nxdomain: Bool = false,
        soa: NegativeAnswerSOA? = nil
    ) {
        self.init(
            addressList: AddressList(addresses), ttl: ttl, originTTL: originTTL, source: source, stale: stale, nxdomain: nxdomain, soa: soa)
    }

    public init(
        addressList: AddressList, ttl: UInt32, originTTL: UInt32, source: AnswerSource, stale: Bool = false, nxdomain: Bool = false,
        soa: NegativeAnswerSOA? = nil
    ) {
        self.addressList = addressList.carrying(soa)
        self.ttl = ttl
        self.originTTL = originTTL
        self.source = source
        self.stale = stale
        self.nxdomain = nxdomain
    }

    /// The SOA of the zone a negative answer came from, when the upstream sent one (kept in
    /// the empty address list, as `CacheEntry` keeps it).
    public var soa: NegativeAnswerSOA? { addressList.soa }

    /// The addresses as text. Setting none keeps the SOA.
    public var addresses: [String] {
        get { addressList.strings }
        set { addressList = AddressList(newValue).carrying(soa) }
    }

    /// The answer a cached entry gives at `now`.
    public init(entry: CacheEntry, at now: Timestamp, source: AnswerSource) {
        let expired = entry.isExpired(at: now)
        self.init(
            addressList: entry.addressList, ttl: entry.remainingTTL(at: now), originTTL: entry.originTTL,
            source: expired ? .stale : source, stale: expired, nxdomain: entry.nxdomain)
    }
}

/// Nothing could be resolved and nothing usable was cached.
public struct ResolveFailure: Error, Sendable, Equatable {
    /// True when every upstream (and the fallback) timed out: HTTP 504 rather than 502.
    public var timedOut: Bool
    public var message: String
    /// Set when no upstream was asked because the account's upstream budget (`upstreamQPS`) was
    /// spent: whole seconds (at least 1) after which a retry may succeed. HTTP 429.
    public var retryAfter: Int?
    /// Set when the account's domain list (`domains`) refuses the name: no upstream was asked,
    /// and nothing cached is answered. Each format refuses in its own way (v1 403
    /// `DomainNotAllowed`, DNS REFUSED, an empty EMAS answer).
    public var notAllowed: Bool

    public init(timedOut: Bool, message: String, retryAfter: Int? = nil, notAllowed: Bool = false) {
        self.timedOut = timedOut
        self.message = message
        self.retryAfter = retryAfter
        self.notAllowed = notAllowed
    }

    /// The failure of a name the account's `domains` refuses.
    public static func notAllowed(_ host: HostName) -> ResolveFailure {
        ResolveFailure(timedOut: false, message: "\(host.value) is not among the account's allowed domains", notAllowed: true)
    }
}

/// The result of resolving one (host, family).
public typealias FamilyOutcome = Result<ResolvedAnswer, ResolveFailure>
