import Foundation
import HTTPDNSTestSupport
import Testing

/// The connection speed test against real loopback listeners: a name whose addresses are one
/// accepting listener, one black hole (connects hang) and one address with nothing listening
/// (refused), all on the same port. After the background probes, answers list the reachable
/// address first and the unreachable ones after it.
@Suite("Speed test")
struct SpeedTestTests {
    @Test func addressesAreListedFastestFirstOnceProbed() async throws {
        let accepting = try LoopbackListener(.accepting, host: LoopbackListener.randomLoopbackAddress())
        defer { accepting.stop() }
        let blackHole = try LoopbackListener(.blackHole, host: LoopbackListener.randomLoopbackAddress(), port: accepting.port)
        defer { blackHole.stop() }
        let refused = LoopbackListener.randomLoopbackAddress()
        let addresses = [refused, blackHole.host, accepting.host]
        try await withService(
            upstreams: { [$0.dnss.upstreamSpec] }, localDNSFallback: false,
            configure: { servers, options in
                options.config = [
                    "accounts": [
                        "default": loopbackAccount(
                            servers,
                            [
                                "localDNSFallback": false, "speedTestEnable": true, "speedPort": .number(Double(accepting.port)),
                                "speedTestTimeout": 0.5,
                            ])
                    ]
                ]
            }
        ) { servers, service in
            let name = TestZone.unique("speed")
            try await servers.unbound.setAddresses(of: name, addresses, ttl: 300)

            let first = try await service.client.get("/v1/default/resolve?host=\(name)&type=A").json
            #expect(Set(first["ips"]?.strings ?? []) == Set(addresses))
            #expect(first["source"]?.string == "upstream")

            // The probes run in the background: the black hole takes its whole timeout.
            let probed = try await poll {
                let metrics = try await service.metrics()
                let unreachable = metrics.sum("httpdns_speedtest_probes_total", ["result": "unreachable"])
                return unreachable >= 2 ? metrics : nil
            }
            let metrics = try #require(probed, "the speed test never reported both unreachable addresses")
            #expect(metrics.sum("httpdns_speedtest_probes_total", ["result": "reachable"]) == 1)
            #expect(metrics.sum("httpdns_speedtest_runs_total", [:]) == 1)
            #expect(accepting.acceptedConnections >= 1)

            let sorted = try await service.client.get("/v1/default/resolve?host=\(name)&type=A").json
            #expect(sorted["source"]?.string == "cache")
            let ips = sorted["ips"]?.strings ?? []
            #expect(ips.first == accepting.host, "\(ips)")
            #expect(Set(ips) == Set(addresses))
        }
    }

    @Test func withoutTheOptionNothingIsProbed() async throws {
        let accepting = try LoopbackListener(.accepting, host: LoopbackListener.randomLoopbackAddress())
        defer { accepting.stop() }
        try await withService(upstreams: { [$0.dnss.upstreamSpec] }, localDNSFallback: false) { servers, service in
            let name = TestZone.unique("nospeed")
            try await servers.unbound.setAddresses(of: name, [LoopbackListener.randomLoopbackAddress(), accepting.host], ttl: 300)
            let answer = try await service.client.get("/v1/default/resolve?host=\(name)&type=A")
            #expect(answer.status == 200)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await accountMetric(service, "httpdns_speedtest_runs_total") == 0)
            #expect(accepting.acceptedConnections == 0)
        }
    }
}
