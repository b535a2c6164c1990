import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

/// The TCP peer of a request: its `IPAddress` (4 or 16 bytes kept inline), copied out of the
/// socket address on every request without an allocation, turned into text only when a handler
/// asks (per-network caches do; most requests never do).
public struct PeerAddress: Sendable, Hashable {
    public let ipAddress: IPAddress

    public var family: RecordFamily { ipAddress.family }

    /// From a `sockaddr` of family AF_INET or AF_INET6; nil for anything else.
    init?(_ address: UnsafePointer<sockaddr>) {
        let read: IPAddress?
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            read = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                withUnsafeBytes(of: v4.pointee.sin_addr) { IPAddress(family: .a, rawBytes: $0) }
            }
        case AF_INET6:
            read = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                withUnsafeBytes(of: v6.pointee.sin6_addr) { IPAddress(family: .aaaa, rawBytes: $0) }
            }
        default:
            read = nil
        }
        guard let read else { return nil }
        ipAddress = read
    }

    /// From an address's text (`IPAddress`'s forms); nil when it is not one.
    public init?(_ text: String) {
        guard let address = IPAddress(text) else { return nil }
        ipAddress = address
    }

    public init(_ address: IPAddress) {
        ipAddress = address
    }

    /// The canonical text form (`192.0.2.1`, `::1`).
    public var text: String { ipAddress.description }

    /// The address with every bit after the first `prefixLength` cleared, for an IPv6 address
    /// (0-128); an IPv4 address is returned whole. An IPv4-mapped IPv6 address
    /// (`::ffff:192.0.2.1`) is the IPv4 address it carries.
    public func keyed(ipv6PrefixLength prefixLength: Int) -> PeerAddress {
        guard family == .aaaa else { return self }
        let (first, second) = ipAddress.withUnsafeBytes {
            (UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)), UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
        if first == 0 && second >> 32 == 0xFFFF {
            let v4 = UInt32(truncatingIfNeeded: second).bigEndian
            return PeerAddress(withUnsafeBytes(of: v4) { IPAddress(family: .a, rawBytes: $0)! })
        }
        let keep = max(0, min(128, prefixLength))
        let high = keep >= 64 ? first : (keep == 0 ? 0 : first & ~(UInt64.max >> keep))
        let low = keep <= 64 ? 0 : (keep == 128 ? second : second & ~(UInt64.max >> (keep - 64)))
        let masked = (high.bigEndian, low.bigEndian)
        return PeerAddress(withUnsafeBytes(of: masked) { IPAddress(family: .aaaa, rawBytes: $0)! })
    }
}
