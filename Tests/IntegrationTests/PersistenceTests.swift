import Foundation
import HTTPDNSTestSupport
import Testing

/// What survives a restart (accounts, cache switches, discard age) and the cache size limit.
@Suite("Persistence and limits")
struct PersistenceTests {
    static let token = "integration-admin-token-1234"
    static let bearer = ["Authorization": "Bearer \(token)"]

    /// Options for a restart on `database` that can only answer from the cache.
    private func offlineOptions(_ database: String) -> HTTPDNSDOptions {
        HTTPDNSDOptions(
            upstreams: ["doh:http://127.0.0.1:\(deadPort())/dns-query"],
            localDNSServers: ["127.0.0.1:\(deadPort())"], localDNSFallback: false,
            adminToken: Self.token, databasePath: database)
    }

    @Test func accountsCreatedThroughTheAdminAPISurviveARestart() async throws {
        let database = try await withTestServers { servers in
            var options = servers.options()
            options.adminToken = Self.token
            return try await withHTTPDNSD(options) { first in
                let account = loopbackAccount(servers, ["accessKeySecret": "kept-secret-1", "maxCacheTTL": 123])
                let put = try await first.client.put("/v1/accounts/durable1", json: account, headers: Self.bearer)
                #expect(put.status / 100 == 2, "\(put)")
                #expect(await first.stop() == 0)
                return first.databasePath
            }
        }
        try await withHTTPDNSD(offlineOptions(database)) { second in
            let response = try await second.client.get("/v1/accounts/durable1", headers: Self.bearer)
            #expect(response.status == 200, "\(response)")
            let config = response.json["config"] ?? response.json
            #expect(config["maxCacheTTL"]?.int == 123, "\(response)")
            #expect(config["accessKeySecret"]?.string == "***")
            // The account exists (its upstreams are the stopped servers, so it cannot resolve anything new).
            let resolve = try await second.client.get("/v1/durable1/resolve?host=\(TestZone.unique())")
            #expect(resolve.status != 404, "\(resolve)")
        }
    }

    @Test func persistentCacheDisabledStartsWithAnEmptyCache() async throws {
        let database = try await withTestServers { servers in
            var options = servers.options()
            options.config = ["accounts": ["default": loopbackAccount(servers, ["persistentCacheIPEnabled": false])]]
            return try await withHTTPDNSD(options) { first in
                let resolved = try await first.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
                #expect(resolved.status == 200)
                #expect(await first.stop() == 0)
                return first.databasePath
            }
        }
        var options = offlineOptions(database)
        options.config = [
            "accounts": [
                "default": [
                    "upstreams": .array(options.upstreams.map { .string($0) }), "localDNSFallback": false,
                    "persistentCacheIPEnabled": false,
                ]
            ]
        ]
        try await withHTTPDNSD(options) { second in
            expectError(
                try await second.client.get("/v1/default/cache?host=\(TestZone.www)&type=A&expired=1"),
                status: 404, code: "NotFound")
        }
    }

    @Test func entriesExpiredLongerThanTheDiscardAgeAreNotLoaded() async throws {
        let database = try await withTestServers { servers in
            var options = servers.options()
            options.config = ["accounts": ["default": loopbackAccount(servers, ["discardRecordsHasExpiredFor": 1])]]
            return try await withHTTPDNSD(options) { first in
                #expect(try await first.client.get("/v1/default/resolve?host=\(TestZone.shortTTLName)&type=A").status == 200)
                let resolved = try await first.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
                #expect(resolved.status == 200)
                #expect(await first.stop() == 0)
                return first.databasePath
            }
        }
        try await Task.sleep(for: .seconds(7))  // TTL 5 s + more than the 1 s discard age
        var options = offlineOptions(database)
        options.config = [
            "accounts": [
                "default": [
                    "upstreams": .array(options.upstreams.map { .string($0) }), "localDNSFallback": false,
                    "discardRecordsHasExpiredFor": 1,
                ]
            ]
        ]
        try await withHTTPDNSD(options) { second in
            expectError(
                try await second.client.get("/v1/default/cache?host=\(TestZone.shortTTLName)&type=A&expired=1"),
                status: 404, code: "NotFound")
            let www = try await second.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            #expect(www.status == 200)
            #expect(www.json["source"]?.string == "cache")
        }
    }

    /// A warm restart keeps the zone SOA of a negative answer (RFC 2308 §3): after it, with no
    /// upstream reachable, the cached NXDOMAIN and NODATA still carry it over RFC 8484.
    @Test func negativeAnswersKeepTheirSOAAcrossARestart() async throws {
        let missing = TestZone.nxdomain("restart")
        let database = try await withTestServers { servers in
            var options = servers.options()
            // Long enough to outlive the restart on a loaded machine: the zone's MINIMUM (45 s) is the TTL.
            options.config = ["accounts": ["default": loopbackAccount(servers, ["maxNegativeCache": 300])]]
            return try await withHTTPDNSD(options) { first in
                let client = DoHTestClient(url: "http://127.0.0.1:\(first.port)/dns-query")
                let nxdomain = try await client.query(missing, type: "A", post: true)
                let nodata = try await client.query(TestZone.v4Only, type: "AAAA", post: true)
                #expect(nxdomain.authority.count == 1 && nodata.authority.count == 1, "\(nxdomain) \(nodata)")
                #expect(await first.stop() == 0)
                return first.databasePath
            }
        }
        try await withHTTPDNSD(offlineOptions(database)) { second in
            let client = DoHTestClient(url: "http://127.0.0.1:\(second.port)/dns-query")
            for (name, type, rcode) in [(missing, "A", "NXDOMAIN"), (TestZone.v4Only, "AAAA", "NOERROR")] {
                let reply = try await client.query(name, type: type, post: false)
                #expect(reply.rcode == rcode, "\(reply)")
                let soa = reply.authority.first
                #expect(reply.authority.count == 1, "\(reply)")
                #expect(soa?.name == "\(TestZone.origin).")
                #expect(soa?.data == "ns.example.test. hostmaster.example.test. 1 3600 1200 604800 \(TestZone.soaMinimum)")
                #expect((soa?.ttl ?? -1) >= 0 && (soa?.ttl ?? 99) <= Int(TestZone.soaMinimum), "\(reply)")
            }
        }
    }

    @Test func cacheCountLimitBoundsTheCacheByEvictingEntries() async throws {
        try await withService(configure: { servers, options in
            options.config = ["accounts": ["default": loopbackAccount(servers, ["cacheCountLimit": 10])]]
        }) { _, service in
            for index in 0..<25 {
                let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.bulkHost(index))&type=A")
                #expect(response.status == 200)
            }
            let metrics = try await service.metrics()
            let entries = metrics.sum("httpdns_cache_entries", [:])
            #expect(entries > 0 && entries <= 10)
            let list = try await service.client.get("/v1/default/cache?limit=100").json
            let hosts = list["entries"]?.array?.compactMap { $0["host"]?.string } ?? []
            #expect(!hosts.isEmpty && hosts.count <= 10)
            #expect(hosts.contains(TestZone.bulkHost(24)))  // the newest survives
            #expect(!hosts.contains(TestZone.bulkHost(0)))  // the oldest went first
        }
    }

    @Test func expiredLookupTriggersABackgroundRefresh() async throws {
        try await withService(upstreams: { [$0.json.upstreamSpec] }) { servers, service in
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.shortTTLName)&type=A")
            try await Task.sleep(for: .seconds(6))
            let expired = try await service.client.get("/v1/default/cache?host=\(TestZone.shortTTLName)&type=A&expired=1")
            #expect(expired.status == 200)
            let asked = try await poll(for: 30) { () -> Int? in  // a hang guard, not a timing assertion
                let count = try await servers.json.requests(for: TestZone.shortTTLName).count
                return count >= 2 ? count : nil
            }
            #expect(asked != nil, "the background refresh never went upstream")
        }
    }
}
