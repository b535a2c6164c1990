import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The real httpdnsd binary, started on a free loopback port with a temp database and
/// loopback-only upstreams; `start` returns once `GET /readyz` answers 200.
public final class HTTPDNSDProcess: Sendable {
    /// HTTP port on 127.0.0.1.
    public let port: UInt16
    /// SQLite file in use (reuse it for a warm restart).
    public let databasePath: String
    /// Directory with the config file and the captured stderr.
    public let directory: URL
    /// Client for this instance.
    public let client: HTTPClient
    /// The extra ports of `HTTPDNSDOptions.withPorts`, by name, as picked for this process.
    private let extraPorts: [String: UInt16]
    private let process: ChildProcess

    private init(port: UInt16, extraPorts: [String: UInt16], databasePath: String, directory: URL, process: ChildProcess) {
        self.port = port
        self.extraPorts = extraPorts
        self.databasePath = databasePath
        self.directory = directory
        self.client = HTTPClient(port: port)
        self.process = process
    }

    /// Starts the binary (`TestPaths.httpdnsdBinary`) and waits for readiness (at most `readyTimeout` s).
    ///
    /// Each of up to 3 attempts picks the harness's port and every port of `options.withPorts`
    /// afresh; another attempt follows only when the log says a bind failed (any listener's:
    /// httpdnsd logs "address in use" or "bind ... failed" and exits 1).
    public static func start(_ options: HTTPDNSDOptions, readyTimeout: Double = 60) async throws -> HTTPDNSDProcess {
        let binary = TestPaths.httpdnsdBinary
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw HarnessError("httpdnsd binary not found at \(binary): run `swift build` or set HTTPDNSD_BIN")
        }
        var lastError: Error = HarnessError("httpdnsd did not start")
        for _ in 0..<3 {
            let ports = HTTPDNSDPorts()
            let attempt = options.applyingPorts(ports)
            try LoopbackGuard.check(attempt)
            let server = try await launch(attempt, extraPorts: ports, binary: binary)
            do {
                try await server.waitUntilReady(timeout: readyTimeout)
                return server
            } catch {
                lastError = error
                await server.kill()
                // Retry only when a port was taken under us.
                guard server.log().contains("in use") || server.log().lowercased().contains("bind") else { break }
            }
        }
        throw lastError
    }

    /// Launches the binary once with `options` (their port settings applied) on a fresh harness
    /// port, temp directory and, unless given, database.
    private static func launch(_ options: HTTPDNSDOptions, extraPorts: HTTPDNSDPorts, binary: String) async throws -> HTTPDNSDProcess {
        let directory = try TestPaths.makeTemporaryDirectory("httpdnsd")
        let port = freePort()
        let databasePath = options.databasePath ?? directory.appendingPathComponent("httpdnsd.sqlite").path
        var arguments: [String] = []
        if let config = options.config {
            let configPath = directory.appendingPathComponent("config.json").path
            try config.encoded().write(toFile: configPath, atomically: true, encoding: .utf8)
            arguments += ["--config", configPath]
        }
        let settings: [(flag: String, env: String, value: String)] =
            [
                (options.harnessListen.flag, options.harnessListen.env, "127.0.0.1:\(port)"),
                ("--db", "HTTPDNS_DB", databasePath),
                ("--upstreams", "HTTPDNS_UPSTREAMS", options.upstreams.joined(separator: ",")),
                ("--localdns-servers", "HTTPDNS_LOCALDNS_SERVERS", options.localDNSServers.joined(separator: ",")),
                ("--localdns-fallback", "HTTPDNS_LOCALDNS_FALLBACK", options.localDNSFallback ? "true" : "false"),
                ("--shutdown-drain", "HTTPDNS_SHUTDOWN_DRAIN", "\(options.shutdownDrain)"),
            ] + (options.adminToken.map { [("--admin-token", "HTTPDNS_ADMIN_TOKEN", $0)] } ?? [])
        var environment = options.environment
        for setting in settings {
            if options.viaEnvironment {
                environment[setting.env] = setting.value
            } else {
                arguments += [setting.flag, setting.value]
            }
        }
        arguments += options.arguments
        let process = try await ChildProcess.launch(
            name: "httpdnsd", executable: binary, arguments: arguments,
            environment: TestPaths.childEnvironment(environment),
            logURL: directory.appendingPathComponent("httpdnsd.stderr"))
        return HTTPDNSDProcess(
            port: port, extraPorts: extraPorts.byName, databasePath: databasePath, directory: directory, process: process)
    }

    /// Runs the binary once with `arguments` (no server expected) and returns its exit status and output.
    public static func runOnce(
        arguments: [String], environment: [String: String] = [:],
        timeout: Double = 15
    ) async throws -> (status: Int32, output: String) {
        let binary = TestPaths.httpdnsdBinary
        let directory = try TestPaths.makeTemporaryDirectory("httpdnsd-once")
        // Should the binary start serving after all, it only knows dead loopback ports.
        var safe = [
            "HTTPDNS_LISTEN": "127.0.0.1:\(freePort())",
            "HTTPDNS_DB": directory.appendingPathComponent("once.sqlite").path,
            "HTTPDNS_UPSTREAMS": "doh:http://127.0.0.1:\(deadPort())/dns-query",
            "HTTPDNS_LOCALDNS_SERVERS": "127.0.0.1:\(deadPort())",
            "HTTPDNS_SHUTDOWN_DRAIN": "0",
        ]
        safe.merge(environment) { _, new in new }
        let process = try await ChildProcess.launch(
            name: "httpdnsd", executable: binary, arguments: arguments,
            environment: TestPaths.childEnvironment(safe),
            logURL: directory.appendingPathComponent("output"), currentDirectory: directory)
        guard await process.waitForExit(timeout: timeout) else {
            await process.kill()
            throw HarnessError("httpdnsd \(arguments) did not exit within \(timeout) s: \(process.output())")
        }
        return (process.terminationStatus ?? -1, process.output())
    }

    /// `127.0.0.1:PORT`.
    public var address: String { "127.0.0.1:\(port)" }

    /// The extra port named `name` in `HTTPDNSDOptions.withPorts`, as picked for this process.
    public func port(named name: String) throws -> UInt16 {
        guard let port = extraPorts[name] else {
            throw HarnessError("no port named '\(name)' was asked for in withPorts (known: \(extraPorts.keys.sorted()))")
        }
        return port
    }

    /// True while the process runs.
    public var isRunning: Bool { process.isRunning }

    /// The process id.
    public var pid: Int32 { process.pid }

    /// The captured stderr (and stdout) so far.
    public func log() -> String { process.output() }

    /// SIGTERM and wait (SIGKILL after `timeout`); returns the exit status. Idempotent.
    @discardableResult
    public func stop(timeout: Double = 15) async -> Int32? { await process.stop(timeout: timeout) }

    /// Sends `signal` (e.g. SIGHUP) while the process runs.
    public func send(signal: Int32) { process.send(signal: signal) }

    /// True when the process ended by a signal (e.g. after `kill()`).
    public var exitedBySignal: Bool { process.exitedBySignal }

    /// SIGKILL and wait. Idempotent.
    public func kill() async { await process.kill() }

    /// GET /metrics, parsed.
    public func metrics() async throws -> PrometheusText {
        let response = try await client.get("/metrics")
        guard response.status == 200 else { throw HarnessError("/metrics answered \(response)") }
        return PrometheusText(response.text)
    }

    private func waitUntilReady(timeout: Double) async throws {
        try await process.waitUntilAnswering(
            "/readyz", through: HTTPClient(port: port, timeout: 2), what: "httpdnsd", limit: timeout, every: .milliseconds(25))
    }
}
