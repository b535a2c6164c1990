import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking TCP socket connected to 127.0.0.1:`port`, whose `recv` and `send` give up after
/// `timeout` seconds: the test clients that speak HTTP over a socket of their own start here.
/// The caller owns the descriptor; on failure nothing is left open.
public func connectToLoopback(port: UInt16, timeout: Double) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
    var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        let code = errno
        close(fd)
        throw HarnessError("connect to 127.0.0.1:\(port) failed: errno \(code)")
    }
    return fd
}
