import Foundation

/// unbound serving `TestZone` (an auth-zone, so CNAME chains come back complete) on a free
/// loopback UDP+TCP port, with remote control on another loopback port for `queryCount()`.
public final class TestUnbound: Sendable {
    /// DNS port (UDP and TCP) on 127.0.0.1.
    public let port: UInt16
    /// unbound-control port on 127.0.0.1.
    public let controlPort: UInt16
    /// Directory holding the config, zone file and log.
    public let directory: URL
    /// The unbound.conf path.
    public let configPath: String
    private let process: ChildProcess

    /// `127.0.0.1:PORT`, the form localDNSServers and dnss take.
    public var address: String { "127.0.0.1:\(port)" }

    private init(port: UInt16, controlPort: UInt16, directory: URL, configPath: String, process: ChildProcess) {
        self.port = port
        self.controlPort = controlPort
        self.directory = directory
        self.configPath = configPath
        self.process = process
    }

    /// Writes the config and zone, starts `unbound -d -c FILE` and waits until it answers.
    public static func start() async throws -> TestUnbound {
        let unbound = try TestPaths.executable("unbound")
        return try await startRetrying(
            "unbound",
            launch: {
                let directory = try TestPaths.makeTemporaryDirectory("unbound")
                let port = freePort()
                let controlPort = freePort()
                let zonePath = directory.appendingPathComponent("example.test.zone").path
                try TestZone.zoneFile().write(toFile: zonePath, atomically: true, encoding: .utf8)
                let configPath = directory.appendingPathComponent("unbound.conf").path
                try config(directory: directory.path, port: port, controlPort: controlPort, zonePath: zonePath)
                    .write(toFile: configPath, atomically: true, encoding: .utf8)
                let process = try await ChildProcess.launch(
                    name: "unbound", executable: unbound, arguments: ["-d", "-c", configPath],
                    environment: TestPaths.childEnvironment(),
                    logURL: directory.appendingPathComponent("unbound.log"))
                return TestUnbound(
                    port: port, controlPort: controlPort, directory: directory,
                    configPath: configPath, process: process)
            },
            ready: { try await $0.waitUntilAnswering() },
            stop: { await $0.stop() })
    }

    /// SIGTERM and wait. Idempotent.
    public func stop() async {
        await process.stop(timeout: 5)
    }

    /// True while unbound runs.
    public var isRunning: Bool { process.isRunning }

    /// unbound's log so far.
    public func log() -> String { process.output() }

    /// Queries unbound has received since it started (`total.num.queries` from
    /// `unbound-control stats_noreset`).
    public func queryCount() async throws -> Int {
        let output = try await runControl(["stats_noreset"])
        for line in output.split(separator: "\n") where line.hasPrefix("total.num.queries=") {
            if let value = Int(line.dropFirst("total.num.queries=".count)) { return value }
        }
        throw HarnessError("no total.num.queries in unbound-control output: \(output)")
    }

    /// Replaces every record of `name` (inside `TestZone.origin`) with address records of `ttl`
    /// (A, or AAAA for addresses with a colon), rewrites this instance's zone file and reloads it
    /// with `unbound-control auth_zone_reload`. Returns once unbound answers the new addresses
    /// (auth-zone answers are not cached, so every later query sees them). Its own check query
    /// counts in `queryCount()`: take a baseline after this call.
    public func setAddresses(of name: String, _ addresses: [String], ttl: UInt32) async throws {
        let suffix = "." + TestZone.origin
        let lowered = name.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
        guard lowered.hasSuffix(suffix), !addresses.isEmpty else {
            throw HarnessError("setAddresses: \(name) is not inside \(TestZone.origin), or no addresses")
        }
        let owner = String(lowered.dropLast(suffix.count))
        let zonePath = directory.appendingPathComponent("example.test.zone").path
        let current = try String(contentsOfFile: zonePath, encoding: .utf8)
        var lines = current.split(separator: "\n").map(String.init).filter {
            $0.split(separator: " ").first.map { $0.lowercased() != owner } ?? true
        }
        lines += addresses.map { "\(owner) \(ttl) IN \($0.contains(":") ? "AAAA" : "A") \($0)" }
        try (lines.joined(separator: "\n") + "\n").write(toFile: zonePath, atomically: true, encoding: .utf8)
        _ = try await runControl(["auth_zone_reload", TestZone.origin])
        let v4 = addresses.filter { !$0.contains(":") }
        guard !v4.isEmpty else { return }
        let reloaded = await Poll.until(limit: 60, every: .milliseconds(20)) {
            (try? await query(lowered)).map { Set($0.addresses) == Set(v4) } ?? false
        }
        if reloaded { return }
        throw HarnessError("unbound does not answer \(v4) for \(name) after auth_zone_reload")
    }

    /// Resolves `name` with a plain DNS query to this unbound; returns the rcode and addresses.
    public func query(_ name: String, type: DNSQuery.RecordType = .a) async throws -> DNSQuery.Answer {
        try await DNSQuery.ask(name, type: type, port: port)
    }

    private func runControl(_ arguments: [String]) async throws -> String {
        let control = try TestPaths.executable("unbound-control")
        let outputURL = directory.appendingPathComponent("control-\(UUID().uuidString.prefix(8)).out")
        let child = try await ChildProcess.launch(
            name: "unbound-control", executable: control, arguments: ["-c", configPath] + arguments,
            environment: TestPaths.childEnvironment(), logURL: outputURL)
        guard await child.waitForExit(timeout: 10) else {
            await child.kill()
            throw HarnessError("unbound-control \(arguments) hung")
        }
        await child.stop()
        let output = child.output()
        try? FileManager.default.removeItem(at: outputURL)
        guard child.terminationStatus == 0 else {
            throw HarnessError("unbound-control \(arguments) failed: \(output)")
        }
        return output
    }

    private func waitUntilAnswering() async throws {
        let answering = try await Poll.until(limit: 60) {
            guard process.isRunning else { throw HarnessError("unbound exited: \(process.output())") }
            // A short wait per look: until unbound binds, a query goes unanswered (no error comes
            // back to an unconnected UDP socket), and the loop looks again anyway.
            guard let answer = try? await DNSQuery.ask(TestZone.www, type: .a, port: port, timeout: 0.25) else { return false }
            return answer.rcode == 0 && !answer.addresses.isEmpty
        }
        guard answering else { throw HarnessError("unbound did not answer on port \(port) within 60 s: \(process.output())") }
    }

    private static func config(directory: String, port: UInt16, controlPort: UInt16, zonePath: String) -> String {
        """
        server:
          interface: 127.0.0.1
          port: \(port)
          so-reuseport: no
          do-ip6: no
          do-daemonize: no
          username: ""
          chroot: ""
          directory: "\(directory)"
          pidfile: "\(directory)/unbound.pid"
          use-syslog: no
          logfile: ""
          verbosity: 1
          num-threads: 1
          access-control: 127.0.0.0/8 allow
          do-not-query-localhost: no
          module-config: "iterator"
          local-zone: "test." nodefault
          # Never recurse to the internet: everything outside the test zone is REFUSED.
          local-zone: "." refuse
          local-zone: "example.test." transparent
          # unbound's local-data in a static zone answers a CNAME alone (unbound
          # does not chase it), so httpdnsd must follow it.
          local-zone: "cname.test." static
        \(TestZone.staticCNAMEData().map { "  local-data: \"\($0)\"" }.joined(separator: "\n"))
          statistics-cumulative: yes
        auth-zone:
          name: "example.test."
          zonefile: "\(zonePath)"
          for-downstream: yes
          for-upstream: yes
          fallback-enabled: no
        remote-control:
          control-enable: yes
          control-interface: 127.0.0.1
          control-port: \(controlPort)
          control-use-cert: no

        """
    }
}
