import HTTPDNSCore

/// How the per-client limits tell clients apart: an IPv4 address is one client, an IPv6 address
/// counts by its first `ipv6PrefixLength` bits (`clientIPv6PrefixLength`, default 64: a host
/// given a /64 holds 2^64 addresses, all one client). The connection limits, the request rate
/// limiter and the shares of the upstream budget all key clients this way.
public struct ClientKeying: Sendable, Equatable {
    /// Bits of an IPv6 address that name its client (32-128).
    public var ipv6PrefixLength: Int

    public static let defaultIPv6PrefixLength = 64

    public init(ipv6PrefixLength: Int = ClientKeying.defaultIPv6PrefixLength) {
        self.ipv6PrefixLength = ipv6PrefixLength
    }

    /// The address that stands for `address`'s client.
    public func key(_ address: PeerAddress) -> PeerAddress { address.keyed(ipv6PrefixLength: ipv6PrefixLength) }

    /// `address`'s client as the engine sees it (the upstream budget's shares): a hash of its key,
    /// seeded per process like every `Hasher`, so a client cannot choose colliding ones.
    public func id(_ address: PeerAddress) -> ClientID {
        ClientID(key: UInt64(truncatingIfNeeded: key(address).hashValue))
    }
}
