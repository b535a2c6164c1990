import Foundation
import HTTPDNSTestSupport
import Synchronization
import Testing

/// One client cannot take the port: thousands of slow connections from one address are refused
/// at accept (per-address limit) or cut (request-read deadline) while another client is served,
/// and the operations listener answers whatever happens on the public one.
///
/// The attacker (scripts/test/slow_clients.py) holds its connections until the test lets it go,
/// and the other clients ask a fixed number of times, each request on its own bound: what is
/// checked is that they were served while the attacker held its connections, never how many
/// answers fitted in some span of time (on a loaded machine the test may wait seconds for a turn).
/// The tests' time limits only catch a hang: they count the wait for the shared test servers'
/// gate too, which a full run on a loaded machine stretches to minutes.
@Suite("Slow clients")
struct SlowClientTests {
    struct AttackResult: Decodable {
        var opened: Int
        var connect_failed: Int
        var closed: Int
        var open_at_end: Int
        var max_open: Int
    }

    /// Seconds one request of the other clients may take: generous for a loaded machine, short
    /// of what a client kept waiting by the attack would see.
    static let requestTimeout = 10.0
    /// Seconds the script runs at most when the test never lets it go (it failed on the way).
    static let attackBound = 300.0

    /// The running script, as the test drives and observes it through its state directory and
    /// the kernel's socket table.
    struct Attacker: Sendable {
        var port: UInt16
        var sources: Set<String>
        var directory: URL

        /// Lets the script open its connections.
        func go() { touch("go") }
        /// Lets the script end: it stops sending, writes its result and closes what is left.
        func stop() { touch("stop") }

        /// Whether the script has opened all its connections (those the server refused included).
        var opened: Bool { FileManager.default.fileExists(atPath: directory.appendingPathComponent("holding.json").path) }

        /// The script's connections to the listener that are established now: those the server
        /// closed (refused, cut or shed) are no longer. The server's address is matched as well
        /// as its port: another server may listen on the same port number on another loopback
        /// address.
        func held() -> Int {
            TCPSocketTable.connections(toPort: port).filter {
                $0.state == .established && $0.remoteHost == "127.0.0.1" && sources.contains($0.localHost)
            }.count
        }

        private func touch(_ name: String) {
            _ = FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: nil)
        }
    }

    /// Runs scripts/test/slow_clients.py from `source` (addresses separated by commas, taken in
    /// turn) while `during` runs, and lets it go when `during` returns or throws; returns both
    /// results. `during` lets the attack start (`whileHeld` does).
    func attack<T: Sendable>(
        port: UInt16, source: String, count: Int, interval: Double, during: (Attacker) async throws -> T
    ) async throws -> (AttackResult, T) {
        let directory = try TestPaths.makeTemporaryDirectory("slow-clients")
        let out = directory.appendingPathComponent("result.json")
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/slow_clients.py").path
        let attacker = Attacker(port: port, sources: Set(source.split(separator: ",").map(String.init)), directory: directory)
        let arguments = [script, String(port), source, String(count), String(interval), String(Self.attackBound), out.path, directory.path]
        async let run = ExternalTool.run("python3", arguments, timeout: Self.attackBound + 60, in: directory)
        let meanwhile: Result<T, any Error>
        do {
            meanwhile = .success(try await during(attacker))
        } catch {
            meanwhile = .failure(error)
        }
        attacker.stop()
        let (status, output) = try await run
        guard status == 0 else { throw HarnessError("slow_clients.py failed (\(status)): \(output)") }
        let value = try meanwhile.get()
        guard let data = try? Data(contentsOf: out) else { throw HarnessError("slow_clients.py wrote no result: \(output)") }
        return (try JSONDecoder().decode(AttackResult.self, from: data), value)
    }

    /// Lets the attacker go ahead and, once it holds at least `minimum` connections, runs
    /// `requests`; then checks it still holds `remaining` (default `minimum`), so that every
    /// request ran while it held them. All on a thread of its own, off the cooperative pool: no
    /// wait for a turn falls between the attacker's start, the requests and the check, which
    /// matters where the server cuts the attacker's connections at a deadline.
    static func whileHeld<T: Sendable>(
        _ attacker: Attacker, atLeast minimum: Int, thenAtLeast remaining: Int? = nil, _ requests: @escaping @Sendable () -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    with: Result {
                        attacker.go()
                        guard Poll.untilBlocking(limit: 60, every: .milliseconds(100), { attacker.opened && attacker.held() >= minimum })
                        else {
                            throw HarnessError(
                                "slow_clients.py never held \(minimum) connections (opened: \(attacker.opened), held: \(attacker.held()))")
                        }
                        let value = requests()
                        let held = attacker.held()
                        guard held >= remaining ?? minimum else {
                            throw HarnessError(
                                "slow_clients.py held \(held) connections after the requests, under \(remaining ?? minimum): they did not all run during the attack"
                            )
                        }
                        return value
                    })
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// What the other clients saw while the attack ran.
    struct Meanwhile: Sendable {
        var victimOK = 0
        var victimFailed: [String] = []
        var opsOK = 0
        var opsFailed: [String] = []
    }

    /// `times` rounds of a request from 127.0.0.1 to the public port (when `victim`) and one to
    /// /healthz on the ops port, one after the other; blocking (for `whileHeld`).
    static func ask(publicPort: UInt16, opsPort: UInt16, times: Int, victim: Bool) -> Meanwhile {
        var seen = Meanwhile()
        let publicClient = HTTPClient(port: publicPort, timeout: requestTimeout)
        let ops = HTTPClient(port: opsPort, timeout: requestTimeout)
        for _ in 0..<times {
            if victim {
                do {
                    let response = try publicClient.requestBlocking("GET", "/v1/default/resolve?host=\(TestZone.www)")
                    if response.status == 200 { seen.victimOK += 1 } else { seen.victimFailed.append("\(response.status)") }
                } catch {
                    seen.victimFailed.append("\(error)")
                }
            }
            do {
                let response = try ops.requestBlocking("GET", "/healthz")
                if response.status == 200 { seen.opsOK += 1 } else { seen.opsFailed.append("\(response.status)") }
            } catch {
                seen.opsFailed.append("\(error)")
            }
        }
        return seen
    }

    /// The connections open on the public listener, as the server counts them.
    static func openOnMain(_ ops: HTTPClient) throws -> Double {
        PrometheusText(try ops.requestBlocking("GET", "/metrics").text).sum("httpdns_connections_open", ["listener": "main"])
    }

    @Test(.timeLimit(.minutes(10)))
    func fourThousandSlowConnectionsFromOneAddressDoNotStopAnotherClient() async throws {
        // The per-address limit is the default (64). The read deadline is what the attacker's
        // admitted connections live for: long enough for its burst of 4200 connections and the
        // requests below (seconds on a loaded machine, off the cooperative pool) to end first.
        // Were the burst still running at the deadline, the connections let in after the cut
        // would not count as refused.
        try await withService(configure: { _, options in
            options.listen("--ops-listen", port: "ops")
            options.arguments += ["--request-read-timeout", "30"]
        }) { _, service in
            let port = service.port, opsPort = try service.port(named: "ops")
            let (result, seen) = try await attack(port: port, source: "127.0.0.2", count: 4200, interval: 2) { attacker in
                // While the attacker holds as many connections as its address may, having had
                // the rest refused, the victim and the ops listener are asked five times each.
                let seen = try await Self.whileHeld(attacker, atLeast: 64) {
                    Self.ask(publicPort: port, opsPort: opsPort, times: 5, victim: true)
                }
                // The attacker lets go once the server has cut every connection it admitted
                // (the result tells when it did not, a minute after the deadline).
                _ = await Poll.until(limit: 90, every: .milliseconds(100)) { attacker.held() == 0 }
                return seen
            }
            let metrics = PrometheusText(try await HTTPClient(port: opsPort).get("/metrics").text)
            let perAddress = metrics.sum("httpdns_connections_rejected_total", ["listener": "main", "reason": "per_address"])
            let slow = metrics.sum("httpdns_connections_closed_slow_total", ["listener": "main"])
            print(
                "slow clients: \(result); victim ok \(seen.victimOK), failed \(seen.victimFailed.count); ops ok \(seen.opsOK); refused per address \(perAddress), cut slow \(slow)"
            )

            #expect(result.opened >= 4000, "the attacker could not even connect: \(result)")
            // Every slow connection was closed by the server before the run ended: the ones over
            // the per-address limit at once, the admitted ones at the read deadline.
            #expect(result.open_at_end == 0, "\(result)")
            #expect(result.closed == result.opened, "\(result)")
            #expect(perAddress >= Double(result.opened - 64 - 8), "refused per address: \(perAddress), \(result)")
            #expect(slow >= 1, "no connection was cut at the read deadline")
            // Meanwhile the other client and the ops listener were served, every time.
            #expect(seen.victimOK == 5 && seen.victimFailed.isEmpty, "victim: \(seen)")
            #expect(seen.opsOK == 5 && seen.opsFailed.isEmpty, "ops: \(seen)")
        }
    }

    @Test(.timeLimit(.minutes(10)))
    func atTheConnectionLimitNewConnectionsAreClosedAtOnceAndOpsStillAnswers() async throws {
        // No per-address limit and no read deadline: only the global limit can close anything.
        try await withService(configure: { _, options in
            options.listen("--ops-listen", port: "ops")
            options.arguments += ["--connection-limit", "50", "--per-ip-connection-limit", "0", "--request-read-timeout", "0"]
        }) { _, service in
            let port = service.port, opsPort = try service.port(named: "ops")
            let (result, seen) = try await attack(port: port, source: "127.0.0.2", count: 80, interval: 2) { attacker in
                // While the attacker fills the public listener, the ops listener is asked three times.
                try await Self.whileHeld(attacker, atLeast: 50 - 4) {
                    Self.ask(publicPort: port, opsPort: opsPort, times: 3, victim: false)
                }
            }
            let ops = HTTPClient(port: opsPort)
            let metrics = PrometheusText(try await ops.get("/metrics").text)
            let atLimit = metrics.sum("httpdns_connections_rejected_total", ["listener": "main", "reason": "limit"])
            print("connection limit: \(result); ops ok \(seen.opsOK); refused at the limit \(atLimit)")
            #expect(result.opened == 80, "\(result)")
            // Those over the limit were closed, not left waiting in the backlog; the rest stayed.
            #expect(result.closed >= 80 - 50 - 4, "\(result)")
            #expect(result.open_at_end >= 50 - 4 && result.open_at_end <= 50 + 4, "\(result)")
            #expect(atLimit >= Double(80 - 50 - 4))
            #expect(seen.opsOK == 3 && seen.opsFailed.isEmpty, "ops: \(seen)")
            // Once the server has seen the slow connections go, the public listener serves again.
            let gone = await Poll.until(limit: 60, every: .milliseconds(100)) {
                let metrics = try? PrometheusText(await ops.get("/metrics").text)
                return metrics?.sum("httpdns_connections_open", ["listener": "main"]) == 0
            }
            #expect(gone, "the server still counts connections the attacker closed")
            let after = try await service.client.get("/healthz")
            #expect(after.status == 200)
        }
    }

    /// Many addresses, each at its per-address limit, hold every connection of the listener (no
    /// read deadline to free any): a newcomer from another address is still answered, its first
    /// connection in place of a slow one of an address holding the most (then there is room).
    @Test(.timeLimit(.minutes(10)))
    func aFullListenerShedsTheAddressesHoldingTheMostForANewcomer() async throws {
        let limits = ["--connection-limit", "40", "--per-ip-connection-limit", "8", "--request-read-timeout", "0"]
        try await withService(configure: { _, options in
            options.listen("--ops-listen", port: "ops")
            options.arguments += limits
        }) { _, service in
            let port = service.port
            let ops = HTTPClient(port: try service.port(named: "ops"), timeout: Self.requestTimeout)
            let attackers = (2...6).map { "127.0.0.\($0)" }.joined(separator: ",")
            let (result, answers) = try await attack(port: port, source: attackers, count: 40, interval: 1) { attacker in
                // Once the server has the 40 slow connections in, the newcomer asks five times;
                // the attacker keeps all of them but those shed for it.
                try await Self.whileHeld(attacker, atLeast: 40, thenAtLeast: 40 - 5) {
                    guard Poll.untilBlocking(limit: 60, every: .milliseconds(100), { ((try? Self.openOnMain(ops)) ?? 0) >= 40 }) else {
                        return ["the slow connections never filled the listener"]
                    }
                    let newcomer = HTTPClient(port: port, timeout: Self.requestTimeout, source: "127.0.0.9")
                    return (0..<5).map { _ in
                        do {
                            return "\(try newcomer.requestBlocking("GET", "/v1/default/resolve?host=\(TestZone.www)").status)"
                        } catch {
                            return "\(error)"
                        }
                    }
                }
            }
            let metrics = PrometheusText(try await ops.get("/metrics").text)
            let shed = metrics.sum("httpdns_connections_shed_total", ["listener": "main"])
            print("full listener: \(result); newcomer \(answers); shed \(shed)")
            #expect(result.opened == 40, "\(result)")
            #expect(answers == Array(repeating: "200", count: 5), "the newcomer was not served: \(answers)")
            #expect(shed >= 1, "shed \(shed)")
            #expect(result.closed >= 1 && result.closed == Int(shed), "\(result)")
        }
    }
}
