#if canImport(Glibc)
    import Glibc
#endif

/// A literal IPv4 or IPv6 address with a port, as the `sockaddr` that `bind(2)`, `connect(2)` and
/// `sendto(2)` take (the speed tester's probes, the test harness's loopback listeners).
public enum SocketAddress: Sendable {
    case v4(sockaddr_in)
    case v6(sockaddr_in6)

    /// Parses a bare literal (`192.0.2.1`, `2001:db8::1`; `inet_pton`); nil for anything else
    /// (names, brackets, scope ids).
    public init?(_ text: String, port: UInt16) {
        // `inet_pton` reads a C string: a NUL would end the text early.
        guard !text.utf8.contains(0) else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(port).bigEndian
            address.sin_addr = v4
            self = .v4(address)
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(port).bigEndian
            address.sin6_addr = v6
            self = .v6(address)
            return
        }
        return nil
    }

    /// `AF_INET` or `AF_INET6`.
    public var family: Int32 {
        switch self {
        case .v4: AF_INET
        case .v6: AF_INET6
        }
    }

    /// Calls `body` with the address as a `sockaddr` pointer and its length.
    public func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        switch self {
        case .v4(var address):
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .v6(var address):
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
    }
}
