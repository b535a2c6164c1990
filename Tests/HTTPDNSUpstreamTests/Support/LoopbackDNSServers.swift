import Foundation
import HTTPDNSCore
import HTTPDNSLoop
import HTTPDNSTestSupport

@testable import HTTPDNSUpstream

#if canImport(Glibc)
    import Glibc
#endif

/// unbound (authoritative for `example.test.` from a zone file) and dnss (RFC 8484 front) on free
/// loopback ports, in a temporary directory. Use ``with(_:)``: it stops both on every path.
final class LoopbackDNSServers {
    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    let directory: URL
    let unboundPort: UInt16
    let dnssPort: UInt16
    private var processes: [Process] = []

    /// `http://127.0.0.1:PORT/dns-query`.
    var dohURL: String { "http://127.0.0.1:\(dnssPort)/dns-query" }

    static let zone = """
        $ORIGIN example.test.
        $TTL 300
        @ 3600 IN SOA ns.example.test. admin.example.test. 1 3600 600 86400 45
        @ IN NS ns
        ns IN A 127.0.0.1
        www 300 IN A 127.0.0.11
        www 300 IN A 127.0.0.12
        www 300 IN AAAA ::1
        api 60 IN CNAME www
        v4only 120 IN A 127.0.0.21

        """

    /// Starts both servers, runs `body`, and stops them whatever happens.
    /// A server that exits before it listens (its port taken between the pick and its bind) is
    /// started again on new ports.
    static func with<T>(_ body: (LoopbackDNSServers) async throws -> T) async throws -> T {
        let servers = try await startRetrying(
            "unbound and dnss", launch: { try LoopbackDNSServers() }, ready: { try await $0.start() }, stop: { $0.stop() })
        defer { servers.stop() }
        return try await body(servers)
    }

    private init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("upstream-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        unboundPort = try Self.freePort()
        dnssPort = try Self.freePort()
    }

    private func start() async throws {
        let zonePath = directory.appendingPathComponent("example.test.zone").path
        try Self.zone.write(toFile: zonePath, atomically: true, encoding: .utf8)
        let config = """
            server:
              interface: 127.0.0.1
              port: \(unboundPort)
              do-daemonize: no
              username: ""
              chroot: ""
              directory: "\(directory.path)"
              pidfile: "\(directory.path)/unbound.pid"
              use-syslog: no
              logfile: ""
              access-control: 127.0.0.0/8 allow
              do-not-query-localhost: no
              module-config: "iterator"
              local-zone: "test." nodefault
              # Never recurse: a name outside the test zone is refused, not looked up on the internet.
              local-zone: "." refuse
              local-zone: "example.test." transparent
            auth-zone:
              name: "example.test."
              zonefile: "\(zonePath)"
              for-downstream: yes
              for-upstream: yes
            remote-control:
              control-enable: no

            """
        let configPath = directory.appendingPathComponent("unbound.conf").path
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        try launch("/usr/sbin/unbound", ["-c", configPath], log: "unbound.log")
        try await waitForTCP(port: unboundPort, name: "unbound")
        try launch(
            "/usr/bin/dnss",
            [
                "-enable_https_to_dns", "-dns_upstream", "127.0.0.1:\(unboundPort)",
                "-https_server_addr", "127.0.0.1:\(dnssPort)", "-insecure_http_server",
            ], log: "dnss.log")
        try await waitForTCP(port: dnssPort, name: "dnss")
    }

    private func launch(_ path: String, _ arguments: [String], log: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let logPath = directory.appendingPathComponent(log).path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = handle
        process.standardError = handle
        try process.runWithDefaultSignalMask()
        processes.append(process)
    }

    /// Stops the servers (SIGTERM, then waits) and removes the directory. Idempotent.
    func stop() {
        for process in processes { stopProcess(process) }
        processes.removeAll()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Polls with `Task.sleep`: a thread of the cooperative pool (two on this machine) blocked
    /// here would stall every other test of the process. 30 s only guards against a hang.
    private func waitForTCP(port: UInt16, name: String) async throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if processes.last?.isRunning == false { break }
            if Self.canConnect(port: port) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        let log = (try? String(contentsOf: directory.appendingPathComponent(name + ".log"), encoding: .utf8)) ?? ""
        throw StartError(description: "\(name) did not listen on 127.0.0.1:\(port): \(log)")
    }

    static func canConnect(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// A port that was free on 127.0.0.1 for both TCP and UDP a moment ago.
    static func freePort() throws -> UInt16 {
        for _ in 0..<20 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = loopback(port: 0)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            close(fd)
            let port = UInt16(bigEndian: address.sin_port)
            guard bound == 0, port != 0 else { continue }
            let udp = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            var udpAddress = loopback(port: port)
            let udpBound = withUnsafePointer(to: &udpAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(udp, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(udp)
            if udpBound == 0 { return port }
        }
        throw StartError(description: "no free loopback port")
    }
}

/// SIGTERM, then SIGKILL after 3 s, then reaps. Children of test threads may inherit a signal
/// mask that blocks SIGTERM, so the SIGKILL fallback is what guarantees the test never hangs here.
func stopProcess(_ process: Process) {
    guard process.isRunning else { return }
    process.terminate()
    let deadline = Date().addingTimeInterval(3)
    while process.isRunning, Date() < deadline { usleep(10_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
}

/// Bridges a completion-style resolve into async/await for tests.
func awaitResult<T: Sendable, E: Error>(_ start: (@escaping @Sendable (Result<T, E>) -> Void) -> Void) async -> Result<T, E> {
    await withCheckedContinuation { continuation in
        start { continuation.resume(returning: $0) }
    }
}

/// The port a test server script bound itself (port 0, so no other process can take it between
/// a pick and the bind) and wrote to `file`, written whole (the script renames it into place).
/// Throws when the process exits first; 30 s only guards against a hang.
func portWritten(to file: URL, by process: Process) async throws -> UInt16 {
    var port: UInt16?
    _ = try await Poll.until(limit: 30, every: .milliseconds(20)) {
        port = (try? String(contentsOf: file, encoding: .utf8)).flatMap { UInt16($0) }
        guard port == nil else { return true }
        guard process.isRunning else { throw LoopbackDNSServers.StartError(description: "the python3 test server exited") }
        return false
    }
    guard let port else { throw LoopbackDNSServers.StartError(description: "the python3 test server wrote no port") }
    return port
}

/// `loop.perform(request)`, with the monotonic time at which the loop thread called the
/// completion: what the loop did, without the time the awaiting task then waits for a thread of
/// the cooperative pool (on two cores, other tests blocking that pool delayed it by seconds).
func performTimed(_ loop: CurlEventLoop, _ request: UpstreamHTTPRequest) async -> (
    Result<UpstreamHTTPResponse, UpstreamError>, Double
) {
    await withCheckedContinuation { continuation in
        loop.perform(request) { continuation.resume(returning: ($0, MonotonicTime.now())) }
    }
}

/// A socket bound to 127.0.0.1 on a kernel-chosen port; closed on deinit.
class LoopbackSocket {
    let port: UInt16
    let fd: Int32

    init(type: Int32) throws {
        let fd = socket(AF_INET, type, 0)
        var address = LoopbackDNSServers.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard fd >= 0, bound == 0 else {
            close(fd)
            throw LoopbackDNSServers.StartError(description: "cannot bind on loopback")
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit {
        close(fd)
    }
}

/// A TCP socket on 127.0.0.1 that accepts connections (kernel backlog) but never answers.
final class SilentTCPListener: LoopbackSocket {
    init() throws {
        try super.init(type: Int32(SOCK_STREAM.rawValue))
        guard listen(fd, 16) == 0 else {
            throw LoopbackDNSServers.StartError(description: "cannot listen on loopback")
        }
    }
}

/// A UDP socket on 127.0.0.1 that receives and never answers.
final class SilentUDPSocket: LoopbackSocket {
    init() throws {
        try super.init(type: Int32(SOCK_DGRAM.rawValue))
    }

    /// Whether a datagram has arrived (it stays queued: nothing ever reads it).
    var hasReceived: Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0
    }
}
