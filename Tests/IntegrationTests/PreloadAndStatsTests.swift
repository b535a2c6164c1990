import Foundation
import HTTPDNSTestSupport
import Testing

/// POST /v1/{account}/preload and GET /v1/{account}/stats.
@Suite("Preload and stats")
struct PreloadAndStatsTests {
    @Test func preloadOfAHundredHostsMakesEveryLaterLookupACacheHit() async throws {
        try await withService { servers, service in
            let hosts = (0..<100).map { TestZone.bulkHost($0) }
            let response = try await service.client.post(
                "/v1/default/preload", json: ["hosts": .array(hosts.map { .string($0) }), "type": "A"])
            #expect(response.status == 200)
            #expect(response.json["resolved"]?.int == 100)
            #expect(response.json["failed"]?.int == 0)
            let results = try #require(response.json["results"]?.array)
            #expect(results.count == 100)
            #expect(results.allSatisfy { $0["ok"]?.bool == true })
            #expect(results.first { $0["host"]?.string == TestZone.bulkHost(7) }?["ips"]?.strings == [TestZone.bulkV4(7)])

            let queriesAfterPreload = try await servers.unbound.queryCount()
            let hitsBefore = try await service.metrics().sum("httpdns_cache_hits_total", [:])
            for (index, host) in hosts.enumerated() {
                let body = try await service.client.get("/v1/default/resolve?host=\(host)&type=A").json
                #expect(body["source"]?.string == "cache", "\(host): \(body)")
                #expect(body["ips"]?.strings == [TestZone.bulkV4(index)])
            }
            let hitsAfter = try await service.metrics().sum("httpdns_cache_hits_total", [:])
            #expect(hitsAfter - hitsBefore == 100)
            #expect(try await servers.unbound.queryCount() == queriesAfterPreload)
        }
    }

    @Test func preloadReportsFailedHostsWithoutFailingTheOthers() async throws {
        try await withService(localDNSFallback: false) { _, service in
            let refused = TestZone.refused()
            let nx = TestZone.nxdomain()
            let response = try await service.client.post(
                "/v1/default/preload", json: ["hosts": [.string(TestZone.www), .string(refused), .string(nx)], "type": "A"])
            #expect(response.status == 200)
            let results = try #require(response.json["results"]?.array, "\(response)")
            #expect(results.count == 3)
            let good = results.first { $0["host"]?.string == TestZone.www }
            let bad = results.first { $0["host"]?.string == refused }
            let negative = results.first { $0["host"]?.string == nx }
            #expect(good?["ok"]?.bool == true)
            #expect(bad?["ok"]?.bool == false)
            #expect(["UpstreamFailed", "UpstreamTimeout"].contains(bad?["error"]?["code"]?.string ?? ""), "\(results)")
            #expect(negative?["ok"]?.bool == true)
            #expect(negative?["nxdomain"]?.bool == true)
            #expect(response.json["resolved"]?.int == 2)
            #expect(response.json["failed"]?.int == 1)
        }
    }

    @Test func preloadWithAnInvalidHostIsRejectedOrReportsItPerHost() async throws {
        try await withService { servers, service in
            let before = try await servers.unbound.queryCount()
            let response = try await service.client.post(
                "/v1/default/preload", json: ["hosts": [.string(TestZone.unique()), "bad..host"], "type": "A"])
            if response.status == 200 {
                let bad = response.json["results"]?.array?.first { $0["host"]?.string == "bad..host" }
                #expect(bad?["ok"]?.bool == false)
                #expect(bad?["error"]?["code"]?.string == "InvalidHost")
            } else {
                expectError(response, status: 400, code: "InvalidHost")
                #expect(try await servers.unbound.queryCount() == before)  // nothing of a rejected body is resolved
            }
        }
    }

    @Test func preloadOverMaxPreloadHostsIs400TooManyHostsAndResolvesNothing() async throws {
        try await withService(configure: { _, options in options.arguments += ["--max-preload-hosts", "2"] }) { servers, service in
            let before = try await servers.unbound.queryCount()
            let hosts: TestJSON = [.string(TestZone.www), .string(TestZone.v4Only), .string(TestZone.v6Only)]
            let response = try await service.client.post("/v1/default/preload", json: ["hosts": hosts, "type": "A"])
            expectError(response, status: 400, code: "TooManyHosts")
            #expect(try await servers.unbound.queryCount() == before)
        }
    }

    @Test func preloadWithoutHostsIs400() async throws {
        try await withService { _, service in
            let response = try await service.client.post("/v1/default/preload", json: ["type": "A"])
            #expect(response.status == 400)
            #expect(["MissingArgument", "InvalidParameter"].contains(response.json["error"]?["code"]?.string ?? ""))
            let notJSON = try await service.client.request(
                "POST", "/v1/default/preload",
                headers: ["Content-Type": "application/json"],
                body: Array("{not json".utf8))
            #expect(notJSON.status == 400)
        }
    }

    @Test func statsRecordHasTheSDKKeysAndCountsUpstreamAndCacheAnswers() async throws {
        try await withService { _, service in
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=AAAA")
            let response = try await service.client.get("/v1/default/stats")
            #expect(response.status == 200)
            let records = try #require(response.json.array, "\(response)")
            let v4 = try #require(
                records.first { $0["domain"]?.string == TestZone.www && $0["type"]?.int == 1 },
                "\(records)")
            let keys = Set(v4.object?.keys.map { $0 } ?? [])
            let expected: Set<String> = [
                "domain", "type", "sp", "avgRtt", "maxRtt", "successNum", "cacheDnsNum",
                "requestPDnsNum", "gobackLocaldnsNum", "localErro", "timeoutErro",
                "noResponseErro", "noPermissionErro", "urlParameterErro", "urlPathErro",
            ]
            #expect(expected.isSubset(of: keys), "missing \(expected.subtracting(keys))")
            #expect(v4["sp"]?.string == "default")
            #expect(v4["avgRtt"]?.string.flatMap { Double($0) } != nil)
            #expect(v4["maxRtt"]?.string.flatMap { Double($0) } != nil)
            // successNum: answered lookups (the SDK counts server answers; a cache answer may or may not count).
            #expect([1, 2].contains(v4["successNum"]?.int ?? -1))
            #expect(v4["cacheDnsNum"]?.int == 1)
            #expect(v4["requestPDnsNum"]?.int == 1)
            #expect(v4["gobackLocaldnsNum"]?.int == 0)
            #expect(v4["timeoutErro"]?.int == 0)
            let v6 = records.first { $0["domain"]?.string == TestZone.www && $0["type"]?.int == 28 }
            #expect(v6?["successNum"]?.int == 1)
            #expect(v6?["requestPDnsNum"]?.int == 1)
        }
    }

    @Test func statsCountTheLocalDNSFallback() async throws {
        try await withService(upstreams: { _ in ["doh:http://127.0.0.1:\(deadPort())/dns-query"] }) { _, service in
            let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.v4Only)&type=A").json
            #expect(body["source"]?.string == "localdns")
            let records = try await service.client.get("/v1/default/stats").json.array ?? []
            let record = records.first { $0["domain"]?.string == TestZone.v4Only && $0["type"]?.int == 1 }
            #expect(record?["gobackLocaldnsNum"]?.int == 1, "\(records)")
        }
    }
}
