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

/// A loopback port nobody listens on (for "dead upstream" tests): free now and never handed out again.
public func deadPort() -> UInt16 { freePort() }

private func loopbackAddress(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

private func bindEphemeralTCPPort() -> UInt16? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var address = loopbackAddress(port: 0)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard bound == 0 else { return nil }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { return nil }
    return UInt16(bigEndian: address.sin_port)
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
