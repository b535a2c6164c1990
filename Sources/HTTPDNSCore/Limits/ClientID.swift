/// Who a request comes from, for the per-client limits: a 64-bit hash of the client's address as
/// the service keys it (an IPv4 address, or the prefix of an IPv6 one; the HTTP front makes it),
/// never 0. The request rate limiter and the shares of an account's upstream budget key clients
/// the same way.
public struct ClientID: Sendable, Hashable {
    /// Never 0 (`ClientBucketTable`'s empty mark).
    public let key: UInt64

    /// `key` as given, or 1 for 0.
    public init(key: UInt64) {
        self.key = key == 0 ? 1 : key
    }
}
