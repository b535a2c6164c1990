import Foundation
import HTTPDNSTestSupport
import Testing

/// A common unbound setup: `local-zone static` answers a CNAME alone. httpdnsd
/// follows it to the addresses (with the chain's TTL), and a chain that ends nowhere is a
/// marked, negative-cached answer.
@Suite("CNAME following")
struct CNAMEFollowingIntegrationTests {
    @Test(arguments: ["doh", "json"])
    func aCNAMEAnsweredAloneIsFollowedToItsAddresses(kind: String) async throws {
        try await withTestServers { servers in
            let upstream = kind == "doh" ? servers.dnss.upstreamSpec : servers.json.upstreamSpec
            try await withHTTPDNSD(servers.options(upstreams: [upstream], localDNSFallback: false)) { service in
                let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.staticCNAME)&type=A")
                #expect(response.status == 200, "\(response)")
                #expect(response.json["ips"]?.strings == TestZone.staticCNAMEV4, "\(response)")
                #expect(response.json["origin_ttl"]?.int == Int(TestZone.staticCNAMETTL), "\(response)")
                #expect(response.json["nodata"] == nil)
            }
        }
    }

    @Test func aLoopATooLongChainAndATargetThatDoesNotExistAreMarkedAndNegativeCached() async throws {
        try await withTestServers { servers in
            try await withHTTPDNSD(servers.options(localDNSFallback: false)) { service in
                let loop = try await service.client.get("/v1/default/resolve?host=\(TestZone.staticLoop)&type=A")
                #expect(loop.status == 200, "\(loop)")
                #expect(loop.json["ips"]?.strings == [])
                #expect(loop.json["nodata"]?.bool == true, "\(loop)")
                #expect((loop.json["origin_ttl"]?.int ?? 0) > 0, "not negative-cached: \(loop)")

                let long = try await service.client.get("/v1/default/resolve?host=\(TestZone.staticLongChain)&type=A")
                #expect(long.json["nodata"]?.bool == true, "\(long)")

                let nowhere = try await service.client.get("/v1/default/resolve?host=\(TestZone.staticToNowhere)&type=A")
                #expect(nowhere.json["nxdomain"]?.bool == true, "\(nowhere)")

                for host in [TestZone.staticLoop, TestZone.staticLongChain, TestZone.staticToNowhere] {
                    let again = try await service.client.get("/v1/default/resolve?host=\(host)&type=A")
                    #expect(again.json["source"]?.string == "cache", "\(host): \(again)")
                }
                #expect(service.log().contains("loops back to"))
                #expect(service.log().contains("longer than 8 links"))
            }
        }
    }
}
