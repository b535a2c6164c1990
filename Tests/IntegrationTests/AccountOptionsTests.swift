import Foundation
import HTTPDNSTestSupport
import Testing

/// Account options changed through the admin API: in force at once, kept across a restart, and
/// `preResolveAfterNetworkChanged` re-resolving the cache through the new upstreams.
@Suite("Account options")
struct AdminAccountOptionsTests {
    static let token = "integration-admin-token-1234"
    static let bearer = ["Authorization": "Bearer \(token)"]

    @Test func optionsChangedThroughTheAdminAPIApplyAtOnceAndSurviveARestart() async throws {
        try await withTestServers { servers in
            var options = servers.options(upstreams: [servers.json.upstreamSpec])
            options.adminToken = Self.token
            let base: [String: TestJSON] = ["localDNSFallback": false]
            let changed: [String: TestJSON] = [
                "localDNSFallback": false, "shortEnable": true, "ipv6Enable": true,
                "maxCacheTTL": 40,
            ]
            let database = try await withHTTPDNSD(options) { first in
                let created = loopbackAccount(servers, upstreams: [servers.json.upstreamSpec], base)
                try LoopbackGuard.checkAccount(id: "opts1", created)
                let put = try await first.client.put("/v1/accounts/opts1", json: created, headers: Self.bearer)
                #expect(put.status == 201, "\(put)")

                // Defaults: an object reply, type=auto is A only, TTLs up to 3600 kept.
                let before = try await first.client.get("/v1/opts1/resolve?host=\(TestZone.www)&type=auto")
                #expect(before.json["ips"]?.strings.map(Set.init) == Set(TestZone.wwwV4), "\(before)")
                let v6 = before.json["ipsv6"]?.strings ?? []
                #expect(v6.isEmpty, "\(before)")
                let longTTL = try await first.client.get("/v1/opts1/resolve?host=\(TestZone.unique("ttl"))&type=A")
                #expect(longTTL.json["origin_ttl"]?.int == 300, "\(longTTL)")

                let update = loopbackAccount(servers, upstreams: [servers.json.upstreamSpec], changed)
                let put2 = try await first.client.put("/v1/accounts/opts1", json: update, headers: Self.bearer)
                #expect(put2.status == 200, "\(put2)")
                try await expectChangedBehaviour(first)
                #expect(await first.stop() == 0)
                return first.databasePath
            }

            options.databasePath = database
            try await withHTTPDNSD(options) { second in
                let account = try await second.client.get("/v1/accounts/opts1", headers: Self.bearer)
                #expect(account.status == 200, "\(account)")
                let config = account.json["config"]
                #expect(config?["shortEnable"]?.bool == true, "\(account)")
                #expect(config?["ipv6Enable"]?.bool == true)
                #expect(config?["maxCacheTTL"]?.int == 40)
                #expect(config?["upstreams"]?.strings == [servers.json.upstreamSpec])
                try await expectChangedBehaviour(second)
            }
        }
    }

    /// shortEnable, ipv6Enable and maxCacheTTL 40 of account opts1, on names never asked before.
    private func expectChangedBehaviour(
        _ service: HTTPDNSDProcess,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let short = try await service.client.get("/v1/opts1/resolve?host=\(TestZone.unique("short"))&type=A")
        #expect(short.status == 200, "\(short)", sourceLocation: sourceLocation)
        #expect(short.json.strings == TestZone.wildV4, "a bare address array: \(short)", sourceLocation: sourceLocation)

        let auto = try await service.client.get("/v1/opts1/resolve?host=\(TestZone.unique("auto"))&type=auto&short=0")
        #expect(auto.json["ips"]?.strings == TestZone.wildV4, "\(auto)", sourceLocation: sourceLocation)
        #expect(
            auto.json["ipsv6"]?.strings == TestZone.wildV6, "type=auto includes AAAA: \(auto)",
            sourceLocation: sourceLocation)
        #expect(auto.json["origin_ttl"]?.int == 40, "TTL 300 capped by maxCacheTTL: \(auto)", sourceLocation: sourceLocation)
        #expect((auto.json["ttl"]?.int ?? 99) <= 40, sourceLocation: sourceLocation)
    }

    @Test func changingUpstreamsReResolvesTheCacheThroughTheNewOnesWhenPreResolveIsOn() async throws {
        try await withService(configure: { _, options in options.adminToken = Self.token }) { servers, service in
            let keys: [String: TestJSON] = ["preResolveAfterNetworkChanged": true, "localDNSFallback": false]
            let overDNSS = loopbackAccount(servers, upstreams: [servers.dnss.upstreamSpec], keys)
            #expect(try await service.client.put("/v1/accounts/moving1", json: overDNSS, headers: Self.bearer).status == 201)
            let names = (0..<3).map { TestZone.unique("moved\($0)") }
            for name in names {
                let response = try await service.client.get("/v1/moving1/resolve?host=\(name)&type=A")
                #expect(response.json["source"]?.string == "upstream", "\(response)")
            }
            #expect(try await servers.json.requests().isEmpty)

            // Same options with the JSON responder as upstream: every cached host is asked there.
            let overJSON = loopbackAccount(servers, upstreams: [servers.json.upstreamSpec], keys)
            let put = try await service.client.put("/v1/accounts/moving1", json: overJSON, headers: Self.bearer)
            #expect(put.status == 200, "\(put)")
            let asked = try await poll { () -> [String]? in
                let hosts = try await servers.json.requests().compactMap {
                    $0.query["name"]?.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
                }
                return Set(names).isSubset(of: Set(hosts)) ? hosts : nil
            }
            #expect(asked.map { $0.sorted() } == names.sorted(), "\(String(describing: asked))")

            // The re-resolved entries are fresh cache hits, answered without another upstream query.
            for name in names {
                #expect(try await service.client.get("/v1/moving1/resolve?host=\(name)&type=A").json["source"]?.string == "cache")
            }
            #expect(try await servers.json.requests().count == names.count)
        }
    }
}
