import Foundation

/// The addresses of one name, and where they came from.
public struct HTTPDNSAnswer: Sendable, Equatable {
    /// Where an answer came from.
    public enum Source: String, Sendable, Equatable {
        /// Just answered by a service.
        case service
        /// This client's cache, within the answer's TTL.
        case cache
        /// This client's cache after the TTL (`reuseExpiredAnswers`); a refresh is under way.
        case stale
        /// The system resolver, because no service answered.
        case system
    }

    /// The name asked, as asked.
    public var host: String
    public var ipv4: [String]
    public var ipv6: [String]
    /// Seconds the answer may be used, counted from when it was received.
    public var ttl: Int
    public var source: Source
    /// The name does not exist (an answer, cached like the others).
    public var nxdomain: Bool

    public init(host: String, ipv4: [String], ipv6: [String], ttl: Int, source: Source, nxdomain: Bool = false) {
        self.host = host
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.ttl = ttl
        self.source = source
        self.nxdomain = nxdomain
    }

    /// Every address, IPv4 first: the order to try connecting in.
    public var addresses: [String] { ipv4 + ipv6 }
}

/// One entry of the service's JSON (the single-host object, or one of `results`).
struct ResolveEntry: Decodable {
    struct EntryError: Decodable {
        var code: String
        var message: String?
    }

    var host: String
    var ips: [String]?
    var ipsv6: [String]?
    var ttl: Int?
    var nxdomain: Bool?
    var error: EntryError?
}

/// A batch reply, `{"results":[...]}`.
struct ResolveBatch: Decodable {
    var results: [ResolveEntry]
}

/// A JSON error body, `{"error":{"code":...,"message":...}}`.
struct ServiceErrorBody: Decodable {
    var error: ResolveEntry.EntryError
}
