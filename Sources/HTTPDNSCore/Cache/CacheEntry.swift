/// The key of one cached answer: a host, a family and (with per-network caches) a client network.
///
/// The key's hash is computed once, when the key is made: a miss hashes its key about ten times
/// (the cache, the single flight, the backoff, the store's queue), and hashing the host's bytes
/// each time was most of what those lookups cost. `Hasher` combines the kept hash, so every
/// dictionary still hashes with its own seed.
public struct CacheKey: Hashable, Sendable, BoundedCacheKey {
    public let host: HostName
    /// The client network (`1.2.3.0/24`) when the account keeps a cache per network, else "".
    public let network: String
    /// The bytes' hash in the low 48 bits and the family's type number in the high 16, so that
    /// the kept hash makes the key no larger (`CacheKey?` stays 40 bytes, a cache's slot array).
    private let hashAndFamily: Int

    public init(host: HostName, family: RecordFamily, network: String = "") {
        self.host = host
        self.network = network
        hashAndFamily = Self.cacheHash(host: host.value, family: family, network: network)
    }

    /// The `cacheHash` of the key of these parts, without making the key.
    static func cacheHash(host: String, family: RecordFamily, network: String) -> Int {
        var hasher = Hasher()
        // Read in place (a native string's bytes, without the copy and the retain and release
        // of each string that `withUTF8` on a copy costs); copied only when not contiguous.
        let hashedInPlace =
            host.utf8.withContiguousStorageIfAvailable { text in
                network.utf8.withContiguousStorageIfAvailable { network in
                    combine(host: text, family: family, network: network, into: &hasher)
                } != nil
            } ?? false
        if !hashedInPlace {
            var text = host
            var network = network
            text.withUTF8 { text in
                network.withUTF8 { network in combine(host: text, family: family, network: network, into: &hasher) }
            }
        }
        return pack(hasher.finalize(), family)
    }

    public var family: RecordFamily { RecordFamily(rawValue: UInt16(truncatingIfNeeded: hashAndFamily >> 48))! }

    /// The hash a `BoundedCache` (and `AnswerCache`'s shards) place the key by; a
    /// `BorrowedCacheKey` of the same parts has the same one.
    public var cacheHash: Int { hashAndFamily }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(hashAndFamily)
    }

    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool {
        lhs.hashAndFamily == rhs.hashAndFamily && lhs.host == rhs.host && lhs.network == rhs.network
    }

    static func pack(_ hash: Int, _ family: RecordFamily) -> Int {
        hash & 0xFFFF_FFFF_FFFF | Int(family.rawValue) << 48
    }

    static func combine(
        host: UnsafeBufferPointer<UInt8>, family: RecordFamily, network: UnsafeBufferPointer<UInt8>, into hasher: inout Hasher
    ) {
        hasher.combine(host.count)
        hasher.combine(bytes: UnsafeRawBufferPointer(host))
        hasher.combine(family)
        hasher.combine(bytes: UnsafeRawBufferPointer(network))
    }
}

/// The key of a lookup whose host (and client network) are still bytes of a request (the fast
/// path): it hashes as the `CacheKey` of the same parts and matches it byte for byte, so a cache
/// hit builds no string. Valid only while those bytes are.
public struct BorrowedCacheKey {
    public let host: UnsafeBufferPointer<UInt8>
    public let family: RecordFamily
    /// The client network as `ClientNetwork` writes it, empty for none (`CacheKey.network`).
    public let network: UnsafeBufferPointer<UInt8>

    /// A key of bytes not checked as a host name. Only a valid name in canonical form is ever
    /// stored, and a key matches a stored one byte for byte, so a lookup that finds something
    /// proves the bytes valid and canonical; one that finds nothing says nothing about them.
    public init(
        unchecked host: UnsafeRawBufferPointer, family: RecordFamily,
        network: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    ) {
        self.host = host.assumingMemoryBound(to: UInt8.self)
        self.family = family
        self.network = network.assumingMemoryBound(to: UInt8.self)
    }

    /// The same key without its network (for an account without per-network caches).
    var withoutNetwork: BorrowedCacheKey {
        BorrowedCacheKey(unchecked: UnsafeRawBufferPointer(host), family: family)
    }

    /// The `cacheHash` of the `CacheKey` of the same parts.
    var cacheHash: Int {
        var hasher = Hasher()
        CacheKey.combine(host: host, family: family, network: network, into: &hasher)
        return CacheKey.pack(hasher.finalize(), family)
    }

    func matches(_ key: CacheKey) -> Bool {
        guard key.family == family, Self.equal(key.network, network) else { return false }
        return Self.equal(key.host.value, host)
    }

    private static func equal(_ text: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        UnsafeRawBufferPointer(bytes).hasSameBytes(as: text)
    }

    /// The key with its own strings (for what outlives the lookup: a refresh, a statistics key).
    var owned: CacheKey {
        CacheKey(host: HostName(canonical: host), family: family, network: String(decoding: network, as: UTF8.self))
    }
}

/// Where an answer came from.
public enum AnswerSource: String, Sendable, Hashable, CaseIterable {
    case cache
    case upstream
    case stale
    case localdns
    /// Another replica's answer, found in the shared tier (Redis) on a local miss.
    case shared
    /// One of the account's `rules` (docs/rules.md): never cached, persisted or shared.
    case rule

    /// The source whose raw value `bytes` spell, else nil, read without making a String (a warm
    /// load reads one a row; a String and a switch on it were 3 % of the load's instructions).
    public init?(rawValue bytes: UnsafeBufferPointer<UInt8>) {
        for (raw, source) in Self.rawValueBytes where raw.withUnsafeBytes({ $0.hasSameBytes(as: UnsafeRawBufferPointer(bytes)) }) {
            self = source
            return
        }
        return nil
    }

    private static let rawValueBytes: [([UInt8], AnswerSource)] = allCases.map { (Array($0.rawValue.utf8), $0) }
}

/// One cached answer with its lifetime.
public struct CacheEntry: Sendable, Hashable {
    /// Addresses, empty for a negative answer; kept packed when they allow it (`AddressList`).
    /// A negative answer's list carries its zone's SOA (`soa`).
    public var addressList: AddressList
    /// TTL after the account's caps, in seconds.
    public var originTTL: UInt32
    /// When the answer was stored (wall clock).
    public var storedAt: Timestamp
    /// True when the name does not exist (NXDOMAIN); false for NODATA and positive answers.
    public var nxdomain: Bool
    /// `upstream` or `localdns`: who gave the answer.
    public var origin: AnswerSource

    /// `soa`: the SOA a negative answer came with, kept in its (empty) address list; ignored for
    /// a positive answer.
    public init(
        addresses: [String], originTTL: UInt32, storedAt: Timestamp, nxdomain: Bool = false, origin: AnswerSource = .upstream,
        soa: NegativeAnswerSOA? = nil
    ) {
        self.init(
            addressList: AddressList(addresses), originTTL: originTTL, storedAt: storedAt, nxdomain: nxdomain, origin: origin, soa: soa)
    }

    public init(
        addressList: AddressList, originTTL: UInt32, storedAt: Timestamp, nxdomain: Bool = false, origin: AnswerSource = .upstream,
        soa: NegativeAnswerSOA? = nil
    ) {
        self.addressList = addressList.carrying(soa)
        self.originTTL = originTTL
        self.storedAt = storedAt
        self.nxdomain = nxdomain
        self.origin = origin
    }

    /// The SOA of the zone a negative answer came from (RFC 2308 §3), when the upstream sent
    /// one; nil for a positive answer.
    public var soa: NegativeAnswerSOA? { addressList.soa }

    /// Addresses as text, empty for a negative answer. Setting none keeps the SOA.
    public var addresses: [String] {
        get { addressList.strings }
        set { addressList = AddressList(newValue).carrying(soa) }
    }

    public var expiresAt: Timestamp { storedAt + Double(originTTL) }
    public var isNegative: Bool { addressList.isEmpty }

    public func isExpired(at now: Timestamp) -> Bool { now >= expiresAt }

    /// Seconds since expiry (negative while fresh).
    public func age(pastExpiryAt now: Timestamp) -> Double { now - expiresAt }

    /// Fresh, but in the last tenth of its TTL (at least the last second): a request now should
    /// refresh it in the background so that it never expires while in use (the C SDK's rule).
    public func isInRefreshAheadWindow(at now: Timestamp) -> Bool {
        let left = expiresAt - now
        return left > 0 && left <= max(Double(originTTL) / 10, 1)
    }

    /// Whole seconds left before expiry, 0 once expired, never more than the origin TTL: an entry
    /// can look stored after `now` (another replica's clock ahead, the shared tier's storedAt
    /// rounded to the millisecond, a clock stepped back), and a part of a second past the origin
    /// TTL would otherwise round up to one second more than the upstream gave.
    public func remainingTTL(at now: Timestamp) -> UInt32 {
        let left = expiresAt - now
        return left <= 0 ? 0 : UInt32(min(left, Double(originTTL)).rounded(.up))
    }
}
