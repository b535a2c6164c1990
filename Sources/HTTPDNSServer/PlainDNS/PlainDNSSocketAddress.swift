import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

/// A UDP peer's socket address, kept to send its response to, and the binding of the
/// listener's sockets.
struct PlainDNSSocketAddress: @unchecked Sendable {
    // `sockaddr_storage` is plain bytes: safe to hand to another thread.
    var storage = sockaddr_storage()
    var length = socklen_t(0)

    /// The peer as the per-client rules know it; nil for a family other than IPv4 and IPv6.
    var peer: PeerAddress? {
        withUnsafePointer(to: storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { PeerAddress($0) } }
    }

    /// The next connection waiting on `listening`, made non-blocking and close-on-exec, with its
    /// peer's address; nil when none is waiting (or accept fails otherwise, e.g. out of
    /// descriptors: the listener is tried again on its next readiness). A connection whose
    /// flags cannot be set is closed and the next one taken.
    static func accept(_ listening: Int32) -> (fd: Int32, from: PlainDNSSocketAddress)? {
        while true {
            var from = PlainDNSSocketAddress()
            from.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &from.storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listening, $0, &from.length) }
            }
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return nil
            }
            // Glibc's module has no accept4: the flags are set after.
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
                close(fd)
                continue
            }
            return (fd, from)
        }
    }

    /// A TCP socket bound as `bound` does and listening with `backlog`: what the plain DNS and
    /// DoT listeners accept their connections on. Returns it and the port it got.
    static func listening(host: String, port: UInt16, backlog: Int32) throws(PlainDNSServerError) -> (fd: Int32, port: UInt16) {
        let socket = try bound(host: host, port: port, type: SOCK_STREAM)
        guard listen(socket.fd, backlog) == 0 else {
            let error = PlainDNSServerError("listen on \(host):\(socket.port)/tcp failed: \(String(cString: strerror(errno)))")
            close(socket.fd)
            throw error
        }
        return socket
    }

    /// A socket of `type` (`SOCK_STREAM`, `SOCK_DGRAM`), non-blocking, bound to `host`:`port`
    /// (an IPv4 or IPv6 address; `SO_REUSEADDR` for TCP so that a restart rebinds at once).
    /// Returns it and the port it got.
    static func bound(host: String, port: UInt16, type: __socket_type) throws(PlainDNSServerError) -> (fd: Int32, port: UInt16) {
        var address = PlainDNSSocketAddress()
        guard let family = address.set(host: host, port: port) else {
            throw PlainDNSServerError("'\(host)' is not an IPv4 or IPv6 address")
        }
        let kind = type == SOCK_STREAM ? "tcp" : "udp"
        let fd = socket(family, Int32(type.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw PlainDNSServerError("socket (\(kind)) failed: \(String(cString: strerror(errno)))") }
        var on: Int32 = 1
        let options = [
            type == SOCK_STREAM ? (SOL_SOCKET, SO_REUSEADDR, "SO_REUSEADDR") : nil,
            family == AF_INET6 ? (Int32(IPPROTO_IPV6), IPV6_V6ONLY, "IPV6_V6ONLY") : nil,
        ]
        for case let (level, option, name)? in options where setsockopt(fd, level, option, &on, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw PlainDNSServerError("setsockopt \(name) (\(kind)) failed: \(reason)")
        }
        let length = address.length
        let result = withUnsafePointer(to: &address.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw PlainDNSServerError("bind \(host):\(port)/\(kind) failed: \(reason)")
        }
        var bound = PlainDNSSocketAddress()
        bound.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &bound.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &bound.length) }
        }
        guard named == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw PlainDNSServerError("getsockname \(host):\(port)/\(kind) failed: \(reason)")
        }
        return (fd, bound.port)
    }

    /// Sets the address from `host`'s text and `port`; returns its family, nil when `host` is
    /// not an address.
    private mutating func set(host: String, port: UInt16) -> Int32? {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { target in withUnsafeBytes(of: v4) { target.copyMemory(from: $0) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            return AF_INET
        }
        var v6 = sockaddr_in6()
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 else { return nil }
        v6.sin6_family = sa_family_t(AF_INET6)
        v6.sin6_port = port.bigEndian
        withUnsafeMutableBytes(of: &storage) { target in withUnsafeBytes(of: v6) { target.copyMemory(from: $0) } }
        length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        return AF_INET6
    }

    /// The port of an IPv4 or IPv6 address (0 for anything else).
    var port: UInt16 {
        withUnsafeBytes(of: storage) { bytes in
            switch Int32(storage.ss_family) {
            // `sin_port` and `sin6_port` both follow the two-byte family.
            case AF_INET, AF_INET6: return UInt16(bigEndian: bytes.load(fromByteOffset: 2, as: UInt16.self))
            default: return 0
            }
        }
    }
}
