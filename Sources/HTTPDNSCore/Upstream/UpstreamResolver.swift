/// One question to an upstream resolver.
public struct UpstreamQuery: Sendable, Hashable {
    public var host: HostName
    public var family: RecordFamily
    /// Whole-request timeout in milliseconds (the account's `timeout`).
    public var timeoutMilliseconds: Int
    /// Client network to send as EDNS Client Subnet (`1.2.3.0/24`); nil sends none.
    public var clientSubnet: String?

    public init(host: HostName, family: RecordFamily, timeoutMilliseconds: Int, clientSubnet: String? = nil) {
        self.host = host
        self.family = family
        self.timeoutMilliseconds = timeoutMilliseconds
        self.clientSubnet = clientSubnet
    }
}

/// What an upstream said about a name. A negative answer (NXDOMAIN, or NOERROR without records
/// of the asked family) has no addresses.
public struct UpstreamAnswer: Sendable, Hashable {
    /// Addresses of the asked family, in the upstream's order, packed as a cache entry keeps
    /// them (`AddressList`), so that storing the answer converts nothing.
    public var addressList: AddressList
    /// Effective TTL of a positive answer (minimum over the CNAME chain), or nil when the reply
    /// carried none (JSON `short=1`, system resolver): the engine then uses its default.
    public var ttl: UInt32?
    /// True when the name does not exist (RCODE 3).
    public var nxdomain: Bool
    /// Negative TTL from the SOA minimum in the authority section (RFC 2308), when present.
    public var negativeTTL: UInt32?
    /// The SOA of that authority section (the zone a negative answer came from), when present
    /// and the upstream's format carries it (not the system resolver's `ares_getaddrinfo`).
    public var soa: NegativeAnswerSOA?
    /// Set when the reply ended in a CNAME without records of the asked type (a "dangling"
    /// CNAME, as unbound's `local-zone static` gives): the name the chain points to, which the
    /// engine then resolves. `ttl` is then the minimum TTL over the CNAME records.
    public var cnameTarget: HostName?

    public init(
        addresses: [String], ttl: UInt32?, nxdomain: Bool = false, negativeTTL: UInt32? = nil, soa: NegativeAnswerSOA? = nil,
        cnameTarget: HostName? = nil
    ) {
        self.init(
            addressList: AddressList(addresses), ttl: ttl, nxdomain: nxdomain, negativeTTL: negativeTTL, soa: soa,
            cnameTarget: cnameTarget)
    }

    public init(
        addressList: AddressList, ttl: UInt32?, nxdomain: Bool = false, negativeTTL: UInt32? = nil, soa: NegativeAnswerSOA? = nil,
        cnameTarget: HostName? = nil
    ) {
        self.addressList = addressList
        self.ttl = ttl
        self.nxdomain = nxdomain
        self.negativeTTL = negativeTTL
        self.soa = soa
        self.cnameTarget = cnameTarget
    }

    /// The addresses as text.
    public var addresses: [String] {
        get { addressList.strings }
        set { addressList = AddressList(newValue) }
    }

    public var isNegative: Bool { addressList.isEmpty }
}

/// Why an upstream gave no usable answer. Each code feeds one statistics counter.
public struct UpstreamError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// No complete reply within the timeout (`timeoutErro`).
        case timeout
        /// Connection refused, reset, TLS failure, ... (`noResponseErro`).
        case transport
        /// HTTP 401/403 or an upstream authentication error (`noPermissionErro`).
        case permission
        /// HTTP 400: the upstream rejected our parameters (`urlParameterErro`).
        case badRequest
        /// HTTP 404: wrong upstream URL (`urlPathErro`).
        case notFound
        /// Other HTTP error status, e.g. 5xx (`noResponseErro`).
        case httpStatus
        /// Empty or unparseable body (`noResponseErro`).
        case malformed
        /// DNS RCODE SERVFAIL, REFUSED or another failure code (`noResponseErro`).
        case serverFailure
    }

    public var code: Code
    public var message: String
    /// The underlying library or protocol code (curl code, HTTP status, RCODE), when there is one.
    public var underlying: Int?

    public init(_ code: Code, _ message: String, underlying: Int? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// A DNS resolver the engine can ask: an upstream adapter (DoH JSON, RFC 8484, HTTPDNS API) or the
/// system resolver. Implementations never block the caller: `resolve` returns at once and calls
/// `completion` exactly once, on a thread of the implementation's choosing.
public protocol UpstreamResolver: Sendable {
    /// A label for logs and metrics, e.g. `doh:http://127.0.0.1:8053/dns-query`.
    var name: String { get }
    func resolve(_ query: UpstreamQuery, completion: @escaping @Sendable (Result<UpstreamAnswer, UpstreamError>) -> Void)
}
