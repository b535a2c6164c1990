import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

/// The TCP peer of a request as raw bytes: copied out of the socket address on every request
/// without an allocation, turned into text or an `IPAddress` only when a handler asks (per-network
/// caches do; most requests never do).
public struct PeerAddress: Sendable, Hashable {
    public let family: RecordFamily
    /// 4 (IPv4) or 16 (IPv6) bytes in network order, left-aligned.
    private let storage: (UInt64, UInt64)

    /// From a `sockaddr` of family AF_INET or AF_INET6; nil for anything else.
    init?(_ address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            var storage: (UInt64, UInt64) = (0, 0)
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                withUnsafeMutableBytes(of: &storage) { target in
                    withUnsafeBytes(of: v4.pointee.sin_addr) { target.copyMemory(from: $0) }
                }
            }
            family = .a
            self.storage = storage
        case AF_INET6:
            var storage: (UInt64, UInt64) = (0, 0)
            address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                withUnsafeMutableBytes(of: &storage) { target in
                    withUnsafeBytes(of: v6.pointee.sin6_addr) { target.copyMemory(from: $0) }
                }
            }
            family = .aaaa
            self.storage = storage
        default:
            return nil
        }
    }

    /// From an address as text (tests, and callers that have only the text); nil when invalid.
    public init?(_ text: String) {
        guard let address = IPAddress(text) else { return nil }
        var storage: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &storage) { target in
            address.withUnsafeBytes { target.copyMemory(from: $0) }
        }
        family = address.family
        self.storage = storage
    }

    /// From a parsed address.
    public init(_ address: IPAddress) {
        var storage: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &storage) { target in
            address.withUnsafeBytes { target.copyMemory(from: $0) }
        }
        family = address.family
        self.storage = storage
    }

    public var ipAddress: IPAddress {
        withUnsafeBytes(of: storage) { raw in
            IPAddress(family: family, rawBytes: UnsafeRawBufferPointer(rebasing: raw.prefix(family == .a ? 4 : 16)))!
        }
    }

    /// The canonical text form (`192.0.2.1`, `::1`).
    public var text: String { ipAddress.description }

    /// The address with every bit after the first `prefixLength` cleared, for an IPv6 address
    /// (0-128); an IPv4 address is returned whole. An IPv4-mapped IPv6 address
    /// (`::ffff:192.0.2.1`) is the IPv4 address it carries.
    public func keyed(ipv6PrefixLength prefixLength: Int) -> PeerAddress {
        guard family == .aaaa else { return self }
        let first = UInt64(bigEndian: storage.0), second = UInt64(bigEndian: storage.1)
        if first == 0 && second >> 32 == 0xFFFF {
            var v4: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &v4) { target in
                withUnsafeBytes(of: storage.1) { target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[4..<8])) }
            }
            return PeerAddress(family: .a, storage: &v4)
        }
        let keep = max(0, min(128, prefixLength))
        let high = keep >= 64 ? first : (keep == 0 ? 0 : first & ~(UInt64.max >> keep))
        let low = keep <= 64 ? 0 : (keep == 128 ? second : second & ~(UInt64.max >> (keep - 64)))
        var masked = (high.bigEndian, low.bigEndian)
        return PeerAddress(family: .aaaa, storage: &masked)
    }

    private init(family: RecordFamily, storage: inout (UInt64, UInt64)) {
        self.family = family
        self.storage = storage
    }

    public static func == (lhs: PeerAddress, rhs: PeerAddress) -> Bool {
        lhs.family == rhs.family && lhs.storage.0 == rhs.storage.0 && lhs.storage.1 == rhs.storage.1
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(family)
        hasher.combine(storage.0)
        hasher.combine(storage.1)
    }
}
