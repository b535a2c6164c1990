import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Ports already handed out in this test process; never handed out twice.
private let handedOutPorts = Mutex<Set<UInt16>>([])

/// A loopback port that is free for both TCP and UDP right now (the kernel picks it).
///
/// Another process may still take it before the caller binds it; servers started by the
/// harness fail loudly in that case (unbound runs with `so-reuseport: no`).
public func freePort() -> UInt16 {
    for _ in 0..<200 {
        guard let port = bindEphemeralTCPPort(), udpPortIsFree(port) else { continue }
        let fresh = handedOutPorts.withLock { ports in ports.insert(port).inserted }
        if fresh { return port }
    }
    fatalError("freePort: no free loopback port found")
}

/// TCP sockets bound to the ports `deadPort()` handed out and never listened on, open for the
/// life of the test process: no other process can take those ports for TCP meanwhile.
private let heldDeadSockets = Mutex<[Int32]>([])

/// A loopback port nobody listens on (for "dead upstream" tests), never handed out again. Over
/// TCP it is refused at once for the life of the test process: this process keeps a socket bound
/// to it that never listens, so the kernel answers a connection with a reset and no other process
/// can listen there. Over UDP it is only free now (a bound UDP socket would swallow the queries,
/// where an unbound port is refused by ICMP).
public func deadPort() -> UInt16 {
    for _ in 0..<200 {
        guard let (fd, port) = bindEphemeralTCPSocket() else { continue }
        guard udpPortIsFree(port), handedOutPorts.withLock({ $0.insert(port).inserted }) else {
            close(fd)
            continue
        }
        heldDeadSockets.withLock { $0.append(fd) }
        return port
    }
    fatalError("deadPort: no free loopback port found")
}

private func loopbackAddress(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

private func bindEphemeralTCPPort() -> UInt16? {
    guard let (fd, port) = bindEphemeralTCPSocket() else { return nil }
    close(fd)
    return port
}

/// A TCP socket bound to a loopback port the kernel picks, not listening, and that port.
private func bindEphemeralTCPSocket() -> (Int32, UInt16)? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = loopbackAddress(port: 0)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named =
        bound == 0
        && withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        } == 0
    guard named else {
        close(fd)
        return nil
    }
    return (fd, UInt16(bigEndian: address.sin_port))
}

private func udpPortIsFree(_ port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopbackAddress(port: port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}
