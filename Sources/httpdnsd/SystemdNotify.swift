import Foundation
import HTTPDNSCore

/// systemd's readiness protocol (`Type=notify`), written directly: one datagram such as
/// `READY=1` to the unix socket named by `NOTIFY_SOCKET` (a path, or `@name` in the abstract
/// namespace). Without `NOTIFY_SOCKET` (not started by systemd) nothing is sent.
enum SystemdNotify {
    /// Sends `state` (`READY=1`, `STOPPING=1`, `STATUS=...`); a failure is logged, never fatal.
    static func send(_ state: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return }
        if let error = deliver(state, to: path) { Log.warning("sd_notify \(state) to \(path): \(error)") }
    }

    /// Nil on success, else what failed.
    static func deliver(_ state: String, to path: String) -> String? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity, path.hasPrefix("/") || abstract else { return "not a unix socket path" }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            if !abstract { raw[bytes.count] = 0 }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return "socket: \(String(cString: strerror(errno)))" }
        defer { close(fd) }
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length) }
            }
        }
        guard sent == message.count else { return "sendto: \(String(cString: strerror(errno)))" }
        return nil
    }
}
