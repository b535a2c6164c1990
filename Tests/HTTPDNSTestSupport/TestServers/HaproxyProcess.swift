import Foundation

/// haproxy (Debian's) on a free loopback port in front of loopback backends (the replicas of a
/// multi-replica test): HTTP mode, round robin per request, each backend health-checked on
/// `GET /readyz` every 200 ms. Every response carries `X-Served-By: r1` (… `rN`, the backend
/// in the order given), so a test sees which replica answered. Or with a configuration the test
/// gives (deploy/haproxy.cfg made to run on loopback), on free ports of its own.
public final class HaproxyProcess: Sendable {
    /// Frontend port on 127.0.0.1: the plain-HTTP frontend, probed for readiness.
    public let port: UInt16
    /// Every port the configuration was given (`port` first).
    public let ports: [UInt16]
    /// The backends' `127.0.0.1` ports, in order (`r1` is the first).
    public let backends: [UInt16]
    /// Client for the frontend.
    public let client: HTTPClient
    private let process: ChildProcess

    private init(ports: [UInt16], backends: [UInt16], process: ChildProcess) {
        self.port = ports[0]
        self.ports = ports
        self.backends = backends
        self.client = HTTPClient(port: port)
        self.process = process
    }

    /// The configuration for a frontend on `port` over `backends` (all on 127.0.0.1).
    public static func configuration(port: UInt16, backends: [UInt16]) -> String {
        var lines = [
            "global",
            "    maxconn 4096",
            "defaults",
            "    mode http",
            "    timeout connect 2s",
            "    timeout client 30s",
            "    timeout server 30s",
            "frontend httpdns",
            "    bind 127.0.0.1:\(port)",
            "    default_backend replicas",
            "backend replicas",
            "    balance roundrobin",
            "    option httpchk GET /readyz",
            "    http-check expect status 200",
            "    http-response set-header X-Served-By %s",
            "    default-server check inter 200ms fall 1 rise 1",
        ]
        for (index, backend) in backends.enumerated() {
            lines.append("    server r\(index + 1) 127.0.0.1:\(backend)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Starts haproxy in the foreground (`-db`) and waits until it answers `GET /healthz`
    /// through a backend (so at least one backend is up).
    public static func start(backends: [UInt16]) async throws -> HaproxyProcess {
        try await start(backends: backends, portCount: 1) { ports in configuration(port: ports[0], backends: backends) }
    }

    /// Like `start(backends:)`, with the configuration `configuration` writes for `portCount`
    /// free ports (the first one a plain-HTTP frontend that reaches `/healthz` of a backend).
    public static func start(
        backends: [UInt16], portCount: Int, configuration: ([UInt16]) throws -> String
    ) async throws -> HaproxyProcess {
        let haproxy = try TestPaths.executable("haproxy")
        return try await startRetrying(
            "haproxy",
            launch: {
                let directory = try TestPaths.makeTemporaryDirectory("haproxy")
                let ports = (0..<portCount).map { _ in freePort() }
                let configPath = directory.appendingPathComponent("haproxy.cfg").path
                try configuration(ports).write(toFile: configPath, atomically: true, encoding: .utf8)
                let process = try await ChildProcess.launch(
                    name: "haproxy", executable: haproxy, arguments: ["-db", "-f", configPath],
                    environment: TestPaths.childEnvironment(),
                    logURL: directory.appendingPathComponent("haproxy.log"))
                return HaproxyProcess(ports: ports, backends: backends, process: process)
            },
            ready: { try await $0.waitUntilAnswering() },
            stop: { await $0.stop() })
    }

    /// SIGTERM and wait. Idempotent.
    public func stop() async { await process.stop(timeout: 5) }

    /// True while haproxy runs.
    public var isRunning: Bool { process.isRunning }

    /// haproxy's log so far.
    public func log() -> String { process.output() }

    /// Waits until every backend is up in haproxy's eyes: 2 × N consecutive requests through it
    /// reached all N backends (round robin), within `timeout` seconds.
    public func waitUntilAllServe(timeout: Double = 20) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        var seen = Set<String>()
        while Date() < deadline {
            seen = []
            for _ in 0..<(backends.count * 2) {
                if let response = try? await client.get("/healthz"), response.status == 200, let name = response.header("X-Served-By") {
                    seen.insert(name)
                }
            }
            if seen.count == backends.count { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessError(
            "haproxy on \(port): only \(seen.sorted()) of \(backends.count) backends served within \(timeout) s: \(process.output())")
    }

    private func waitUntilAnswering() async throws {
        try await process.waitUntilAnswering("/healthz", through: HTTPClient(port: port, timeout: 2), what: "haproxy")
    }
}
