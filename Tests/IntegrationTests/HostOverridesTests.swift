import Foundation
import HTTPDNSTestSupport
import Testing

/// An account's `hostOverrides` against the real binary and unbound on loopback: a name's TTL is
/// the rule's, and a name not to be cached asks the upstream on every request while others hit.
@Suite("Per-name caching")
struct HostOverridesIntegrationTests {
    @Test func aRulesTTLAndNoCachingApplyToItsNamesOnly() async throws {
        let live = TestZone.unique("live")
        try await withJSONUpstreamAccount([
            "hostOverrides": [
                ["hosts": [.string(TestZone.www)], "ttl": 3600],
                ["hosts": ["*.wild.example.test"], "cache": false],
            ]
        ]) { servers, service in
            let client = service.client
            let first = try await client.get("/v1/default/resolve?host=\(TestZone.www)&type=A").json
            // The rule's hour, not the zone's 300 s; long enough that the next request is a hit
            // however late a loaded machine sends it.
            #expect(first["origin_ttl"]?.int == 3600, "\(first)")
            let again = try await client.get("/v1/default/resolve?host=\(TestZone.www)&type=A").json
            #expect(again["source"]?.string == "cache", "\(again)")
            let ttl = again["ttl"]?.int ?? 0
            #expect(ttl > Int(TestZone.wwwTTL) && ttl <= 3600, "\(again)")
            for _ in 0..<3 {
                let answer = try await client.get("/v1/default/resolve?host=\(live)&type=A").json
                #expect(answer["source"]?.string == "upstream", "\(answer)")
                #expect(answer["ips"]?.strings == TestZone.wildV4)
            }
            #expect(try await servers.json.requests(for: live).count == 3)
            #expect(try await servers.json.requests(for: TestZone.www).count == 1)
        }
    }
}
