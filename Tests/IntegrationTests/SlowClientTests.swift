import Foundation
import HTTPDNSTestSupport
import Synchronization
import Testing

/// One client cannot take the port: thousands of slow connections from one address are refused
/// at accept (per-address limit) or cut (request-read deadline) while another client is served,
/// and the operations listener answers whatever happens on the public one.
@Suite("Slow clients")
struct SlowClientTests {
    struct AttackResult: Decodable {
        var opened: Int
        var connect_failed: Int
        var closed: Int
        var open_at_end: Int
        var max_open: Int
    }

    /// Runs scripts/test/slow_clients.py from `source` (addresses separated by commas, taken in
    /// turn) while `during` runs; returns both results.
    func attack<T: Sendable>(
        port: UInt16, source: String, count: Int, interval: Double, duration: Double,
        during: @Sendable @escaping () async throws -> T
    ) async throws -> (AttackResult, T) {
        let directory = try TestPaths.makeTemporaryDirectory("slow-clients")
        let out = directory.appendingPathComponent("result.json")
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/slow_clients.py").path
        async let attacker = ExternalTool.run(
            "python3", [script, String(port), source, String(count), String(interval), String(duration), out.path],
            timeout: duration + 60, in: directory)
        let meanwhile = try await during()
        let (status, output) = try await attacker
        guard status == 0, let data = try? Data(contentsOf: out) else {
            throw HarnessError("slow_clients.py failed (\(status)): \(output)")
        }
        return (try JSONDecoder().decode(AttackResult.self, from: data), meanwhile)
    }

    /// What the other clients saw while the attack ran.
    struct Meanwhile: Sendable {
        var victimOK = 0
        var victimFailed: [String] = []
        var opsOK = 0
        var opsFailed: [String] = []
    }

    /// Requests from 127.0.0.1 to the public port and /healthz on the ops port, for `seconds`.
    static func keepAsking(publicPort: UInt16, opsPort: UInt16, seconds: Double, victim: Bool) async -> Meanwhile {
        var seen = Meanwhile()
        let publicClient = HTTPClient(port: publicPort, timeout: 5)
        let ops = HTTPClient(port: opsPort, timeout: 5)
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if victim {
                do {
                    let response = try await publicClient.get("/v1/default/resolve?host=\(TestZone.www)")
                    if response.status == 200 { seen.victimOK += 1 } else { seen.victimFailed.append("\(response.status)") }
                } catch {
                    seen.victimFailed.append("\(error)")
                }
            }
            do {
                let response = try await ops.get("/healthz")
                if response.status == 200 { seen.opsOK += 1 } else { seen.opsFailed.append("\(response.status)") }
            } catch {
                seen.opsFailed.append("\(error)")
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return seen
    }

    @Test(.timeLimit(.minutes(5)))
    func fourThousandSlowConnectionsFromOneAddressDoNotStopAnotherClient() async throws {
        let opsPort = freePort()
        // The per-address limit is the default (64); the read deadline is shortened for the test.
        try await withService(configure: { _, options in
            options.arguments += ["--ops-listen", "127.0.0.1:\(opsPort)", "--request-read-timeout", "3"]
        }) { _, service in
            let port = service.port
            let (result, seen) = try await attack(port: port, source: "127.0.0.2", count: 4200, interval: 2, duration: 12) {
                await Self.keepAsking(publicPort: port, opsPort: opsPort, seconds: 10, victim: true)
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
            #expect(seen.victimOK >= 5 && seen.victimFailed.isEmpty, "victim: \(seen)")
            #expect(seen.opsOK >= 5 && seen.opsFailed.isEmpty, "ops: \(seen)")
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func atTheConnectionLimitNewConnectionsAreClosedAtOnceAndOpsStillAnswers() async throws {
        let opsPort = freePort()
        // No per-address limit and no read deadline: only the global limit can close anything.
        try await withService(configure: { _, options in
            options.arguments += [
                "--ops-listen", "127.0.0.1:\(opsPort)", "--connection-limit", "50",
                "--per-ip-connection-limit", "0", "--request-read-timeout", "0",
            ]
        }) { _, service in
            let port = service.port
            let (result, seen) = try await attack(port: port, source: "127.0.0.2", count: 80, interval: 2, duration: 5) {
                try? await Task.sleep(for: .seconds(1))
                return await Self.keepAsking(publicPort: port, opsPort: opsPort, seconds: 3, victim: false)
            }
            let metrics = PrometheusText(try await HTTPClient(port: opsPort).get("/metrics").text)
            let atLimit = metrics.sum("httpdns_connections_rejected_total", ["listener": "main", "reason": "limit"])
            print("connection limit: \(result); ops ok \(seen.opsOK); refused at the limit \(atLimit)")
            #expect(result.opened == 80, "\(result)")
            // Those over the limit were closed, not left waiting in the backlog; the rest stayed.
            #expect(result.closed >= 80 - 50 - 4, "\(result)")
            #expect(result.open_at_end >= 50 - 4 && result.open_at_end <= 50 + 4, "\(result)")
            #expect(atLimit >= Double(80 - 50 - 4))
            #expect(seen.opsOK >= 3 && seen.opsFailed.isEmpty, "ops: \(seen)")
            // Once the slow connections are gone, the public listener serves again.
            let after = try await service.client.get("/healthz")
            #expect(after.status == 200)
        }
    }

    /// Many addresses, each at its per-address limit, hold every connection of the listener (no
    /// read deadline to free any): a newcomer from another address is still answered, its first
    /// connection in place of a slow one of an address holding the most (then there is room).
    @Test(.timeLimit(.minutes(3)))
    func aFullListenerShedsTheAddressesHoldingTheMostForANewcomer() async throws {
        let opsPort = freePort()
        let limits = ["--connection-limit", "40", "--per-ip-connection-limit", "8", "--request-read-timeout", "0"]
        try await withService(configure: { _, options in options.arguments += ["--ops-listen", "127.0.0.1:\(opsPort)"] + limits }) {
            _, service in
            let port = service.port
            let ops = HTTPClient(port: opsPort, timeout: 5)
            let attackers = (2...6).map { "127.0.0.\($0)" }.joined(separator: ",")
            let (result, answers) = try await attack(port: port, source: attackers, count: 40, interval: 1, duration: 8) {
                // Once the 40 slow connections are all in, the newcomer asks five times.
                let full = try await poll(for: 20) {
                    let metrics = PrometheusText(try await ops.get("/metrics").text)
                    return metrics.sum("httpdns_connections_open", ["listener": "main"]) >= 40 ? true : nil
                }
                guard full != nil else { return ["the slow connections never filled the listener"] }
                let newcomer = HTTPClient(port: port, timeout: 5, source: "127.0.0.9")
                var seen: [String] = []
                for _ in 0..<5 {
                    do {
                        seen.append("\(try await newcomer.get("/v1/default/resolve?host=\(TestZone.www)").status)")
                    } catch {
                        seen.append("\(error)")
                    }
                }
                return seen
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
