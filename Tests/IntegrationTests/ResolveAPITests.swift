import Foundation
import HTTPDNSTestSupport
import Testing

/// GET /v1/{account}/resolve against the real binary, dnss and unbound.
@Suite("Resolve API")
struct ResolveAPITests {
    @Test func typeAReturnsTheIPv4AddressesWithTTLAndSource() async throws {
        try await withService { _, service in
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            #expect(response.status == 200)
            #expect(response.header("content-type")?.hasPrefix("application/json") == true)
            let body = response.json
            #expect(body["host"]?.string == TestZone.www)
            #expect(Set(body["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(body["ipsv6"]?.strings == [])
            #expect(body["origin_ttl"]?.int == Int(TestZone.wwwTTL))
            let ttl = try #require(body["ttl"]?.int)
            #expect(ttl > 0 && ttl <= Int(TestZone.wwwTTL))
            #expect(body["source"]?.string == "upstream")
            #expect(body["stale"]?.bool == false)
            #expect(body["nxdomain"] == nil || body["nxdomain"]?.bool == false)
        }
    }

    @Test func typeAAAAReturnsOnlyIPv6Addresses() async throws {
        try await withService { _, service in
            let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=AAAA").json
            #expect(body["ipsv6"]?.strings == TestZone.wwwV6)
            #expect(body["ips"]?.strings == [])
        }
    }

    @Test func autoReturnsOnlyIPv4WhenTheAccountHasIPv6Disabled() async throws {
        try await withService { _, service in
            let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=auto").json
            #expect(Set(body["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(body["ipsv6"]?.strings == [])
        }
    }

    @Test func autoAddsIPv6WhenTheAccountEnablesIt() async throws {
        try await withService(configure: { servers, options in
            options.config = ["accounts": ["default": loopbackAccount(servers, ["ipv6Enable": true])]]
        }) { _, service in
            let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=auto").json
            #expect(Set(body["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(body["ipsv6"]?.strings == TestZone.wwwV6)
        }
    }

    @Test func bothReturnsIPv4AndIPv6() async throws {
        try await withService { _, service in
            let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=both").json
            #expect(Set(body["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(body["ipsv6"]?.strings == TestZone.wwwV6)
        }
    }

    @Test func typeDefaultsToAWhenOmitted() async throws {
        try await withService { _, service in
            let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.v4Only)").json
            #expect(body["ips"]?.strings == TestZone.v4OnlyV4)
        }
    }

    @Test func batchReturnsOneResultPerHostInRequestOrder() async throws {
        try await withService { _, service in
            let nx = TestZone.nxdomain()
            let response = try await service.client.get(
                "/v1/default/resolve?host=\(TestZone.www),\(TestZone.v4Only),\(nx)&type=A")
            #expect(response.status == 200)
            let results = try #require(response.json["results"]?.array)
            #expect(results.count == 3)
            #expect(results.compactMap { $0["host"]?.string } == [TestZone.www, TestZone.v4Only, nx])
            #expect(Set(results[0]["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(results[1]["ips"]?.strings == TestZone.v4OnlyV4)
            #expect(results[2]["nxdomain"]?.bool == true)
            #expect(results[2]["ips"]?.strings == [])
        }
    }

    @Test func batchWithAnInvalidHostReportsTheErrorInsideTheBatchOrRejectsIt() async throws {
        try await withService { servers, service in
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.www),bad..host&type=A")
            if response.status == 200 {
                let results = try #require(response.json["results"]?.array)
                #expect(results.count == 2)
                #expect(Set(results[0]["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
                #expect(results[1]["error"]?["code"]?.string == "InvalidHost")
            } else {
                expectError(response, status: 400, code: "InvalidHost")
            }
            _ = servers
        }
    }

    @Test func moreThanTwentyHostsIsTooManyHosts() async throws {
        try await withService { _, service in
            let hosts = (0..<21).map { TestZone.bulkHost($0) }.joined(separator: ",")
            let response = try await service.client.get("/v1/default/resolve?host=\(hosts)")
            expectError(response, status: 400, code: "TooManyHosts")
        }
    }

    @Test func shortReturnsABareArrayIPv4ThenIPv6() async throws {
        try await withService { _, service in
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=both&short=1")
            #expect(response.status == 200)
            let addresses = try #require(response.json.strings, "\(response)")
            #expect(addresses.count == 3)
            #expect(Set(addresses.prefix(2)) == Set(TestZone.wwwV4))
            #expect(addresses.last == TestZone.wwwV6[0])
        }
    }

    @Test func cnameChainResolvesToTheFinalAddressesWithTheMinimumTTL() async throws {
        try await withService { _, service in
            let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.cnameChain)&type=A").json
            #expect(body["host"]?.string == TestZone.cnameChain)
            #expect(Set(body["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(body["origin_ttl"]?.int == Int(TestZone.cnameChainTTL))
            let ttl = try #require(body["ttl"]?.int)
            #expect(ttl > 0 && ttl <= Int(TestZone.cnameChainTTL))
        }
    }

    @Test func nxdomainIs200WithNxdomainTrueAndTheRepeatComesFromTheCache() async throws {
        try await withService(upstreams: { [$0.json.upstreamSpec] }) { servers, service in
            let name = TestZone.nxdomain()
            let first = try await service.client.get("/v1/default/resolve?host=\(name)&type=A")
            #expect(first.status == 200)
            #expect(first.json["nxdomain"]?.bool == true)
            #expect(first.json["ips"]?.strings == [])
            #expect(first.json["ipsv6"]?.strings == [])
            let second = try await service.client.get("/v1/default/resolve?host=\(name)&type=A")
            #expect(second.status == 200)
            #expect(second.json["nxdomain"]?.bool == true)
            #expect(second.json["source"]?.string == "cache")
            #expect(try await servers.json.requests(for: name).count == 1)
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_cache_negative_hits_total", [:]) >= 1)
        }
    }

    @Test func repeatedLookupIsServedFromTheCacheWithoutAnUpstreamQuery() async throws {
        try await withService { servers, service in
            let first = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A").json
            #expect(first["source"]?.string == "upstream")
            let queriesAfterFirst = try await servers.unbound.queryCount()
            let second = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A").json
            #expect(second["source"]?.string == "cache")
            #expect(Set(second["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect((second["ttl"]?.int ?? 0) <= (first["ttl"]?.int ?? 0))
            #expect(try await servers.unbound.queryCount() == queriesAfterFirst)
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_cache_hits_total", [:]) >= 1)
            #expect(metrics.sum("httpdns_cache_misses_total", [:]) >= 1)
        }
    }

    @Test func invalidHostIs400InvalidHostAndNothingReachesTheUpstream() async throws {
        try await withService(upstreams: { [$0.json.upstreamSpec] }) { servers, service in
            for host in [
                "bad..host.example.test", "-leading.example.test", "under%20space.example.test",
                String(repeating: "a", count: 64) + ".example.test",
            ] {
                let response = try await service.client.get("/v1/default/resolve?host=\(host)&type=A")
                expectError(response, status: 400, code: "InvalidHost")
            }
            // Only the start-up probe (UpstreamProbe) reached it, before the service was ready.
            let asked = try await servers.json.requests().compactMap { $0.query["name"] }
            #expect(asked.allSatisfy { $0.hasPrefix("httpdnsd-probe.invalid") }, "\(asked)")
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_upstream_requests_total") == 0)
        }
    }

    @Test func missingHostIs400MissingArgument() async throws {
        try await withService { _, service in
            expectError(try await service.client.get("/v1/default/resolve?type=A"), status: 400, code: "MissingArgument")
        }
    }

    @Test func unknownTypeIs400InvalidParameter() async throws {
        try await withService { _, service in
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=MX")
            expectError(response, status: 400, code: "InvalidParameter")
        }
    }

    @Test func unknownAccountIs404UnknownAccount() async throws {
        try await withService { _, service in
            let response = try await service.client.get("/v1/nosuchaccount/resolve?host=\(TestZone.www)")
            expectError(response, status: 404, code: "UnknownAccount")
        }
    }
}
