import Foundation

/// dnss as an RFC 8484 DoH front (plain HTTP, `-insecure_http_server`) of a loopback DNS server.
public final class TestDNSS: Sendable {
    /// HTTP port on 127.0.0.1.
    public let port: UInt16
    private let process: ChildProcess

    /// `http://127.0.0.1:PORT/dns-query`.
    public var dohURL: String { "http://127.0.0.1:\(port)/dns-query" }
    /// The upstream spec for httpdnsd: `doh:http://127.0.0.1:PORT/dns-query`.
    public var upstreamSpec: String { "doh:\(dohURL)" }

    private init(port: UInt16, process: ChildProcess) {
        self.port = port
        self.process = process
    }

    /// Starts dnss forwarding to 127.0.0.1:`dnsPort` and waits until it answers a DoH query.
    public static func start(dnsPort: UInt16) async throws -> TestDNSS {
        let dnss = try TestPaths.executable("dnss")
        return try await startRetrying(
            "dnss",
            launch: {
                let directory = try TestPaths.makeTemporaryDirectory("dnss")
                let port = freePort()
                let process = try await ChildProcess.launch(
                    name: "dnss", executable: dnss,
                    arguments: [
                        "-enable_https_to_dns", "-dns_upstream", "127.0.0.1:\(dnsPort)",
                        "-https_server_addr", "127.0.0.1:\(port)", "-insecure_http_server",
                        "-fallback_upstream", "127.0.0.1:\(dnsPort)",
                    ],
                    environment: TestPaths.childEnvironment(),
                    logURL: directory.appendingPathComponent("dnss.log"))
                return TestDNSS(port: port, process: process)
            },
            ready: { try await $0.waitUntilAnswering() },
            stop: { await $0.stop() })
    }

    /// SIGTERM and wait. Idempotent.
    public func stop() async { await process.stop(timeout: 5) }

    /// True while dnss runs.
    public var isRunning: Bool { process.isRunning }

    /// dnss's log so far.
    public func log() -> String { process.output() }

    private func waitUntilAnswering() async throws {
        // GET /dns-query?dns= for www.example.test A, id 0.
        let path = "/dns-query?dns=AAABAAABAAAAAAAAA3d3dwdleGFtcGxlBHRlc3QAAAEAAQ"
        try await process.waitUntilAnswering(path, through: HTTPClient(port: port, timeout: 2), what: "dnss")
    }
}
