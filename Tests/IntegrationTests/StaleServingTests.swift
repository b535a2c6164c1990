import Foundation
import HTTPDNSTestSupport
import Testing

/// Expired answers served stale, through the real binary against unbound and dnss: reuse of
/// expired IPs after a record changed, serve-stale while the upstream is dead, and the bounds
/// (`maxStaleAge`, `staleExcludeHosts`).
@Suite("Stale serving")
struct StaleServingTests {
    /// httpdnsd whose default account asks dnss only (no local-DNS fallback), with `extra` options;
    /// `accounts` adds more accounts over dnss without fallback.
    private func withDNSSService(
        _ extra: [String: TestJSON], accounts: [String: [String: TestJSON]] = [:],
        _ body: (TestServers, HTTPDNSDProcess) async throws -> Void
    ) async throws {
        try await withService(
            localDNSFallback: false,
            configure: { servers, options in
                var all: [String: TestJSON] = [:]
                for (id, keys) in accounts.merging(["default": extra], uniquingKeysWith: { _, new in new }) {
                    all[id] = loopbackAccount(servers, keys.merging(["localDNSFallback": false]) { _, new in new })
                }
                options.config = ["accounts": .object(all)]
            }, body)
    }

    @Test func changedRecordIsServedStaleOnceThenTheNewAddressFromTheBackgroundRefresh() async throws {
        let name = TestZone.uniqueTTL2("flip")
        let newAddress = "127.0.0.74"
        try await withDNSSService(["reuseExpiredIPEnabled": true]) { servers, service in
            let path = "/v1/default/resolve?host=\(name)&type=A"
            let first = try await service.client.get(path)
            #expect(first.status == 200, "\(first)")
            #expect(first.json["ips"]?.strings == TestZone.ttl2V4)
            #expect(first.json["source"]?.string == "upstream")
            #expect(first.json["origin_ttl"]?.int == Int(TestZone.ttl2))

            try await Task.sleep(for: .milliseconds(2600))  // past the TTL of 2 s; no request in between
            try await servers.unbound.setAddresses(of: name, [newAddress], ttl: 300)
            let queriesBefore = try await servers.unbound.queryCount()

            // The expired entry answers at once, marked stale: the old address.
            let stale = try await service.client.get(path)
            #expect(stale.status == 200, "\(stale)")
            #expect(stale.json["ips"]?.strings == TestZone.ttl2V4, "\(stale)")
            #expect(stale.json["stale"]?.bool == true)
            #expect(stale.json["source"]?.string == "stale")
            #expect(stale.json["ttl"]?.int == 0)

            // The background refresh stores the new address (the cache lookup never refreshes).
            let refreshed = try await poll {
                let cached = try await service.client.get("/v1/default/cache?host=\(name)&type=A")
                return cached.status == 200 && cached.json["ips"]?.strings == [newAddress] ? cached : nil
            }
            #expect(refreshed != nil, "the background refresh never stored \(newAddress)")

            let fresh = try await service.client.get(path)
            #expect(fresh.json["ips"]?.strings == [newAddress], "\(fresh)")
            #expect(fresh.json["stale"]?.bool == false)
            #expect(fresh.json["source"]?.string == "cache")
            #expect((fresh.json["ttl"]?.int ?? 0) > 0)
            #expect(fresh.json["origin_ttl"]?.int == 300)

            // Exactly one refresh went upstream, and the stale answer was counted once.
            #expect(try await servers.unbound.queryCount() - queriesBefore == 1)
            #expect(try await accountMetric(service, "httpdns_cache_served_stale_total") == 1)
            #expect(try await statsRecord(service, domain: name)?["staleNum"]?.int == 1)
        }
    }

    @Test func deadUpstreamServesStaleAnswersInsteadOfAnErrorWithinMaxStaleAge() async throws {
        let kept = TestZone.uniqueTTL2("kept")
        let bounded = TestZone.uniqueTTL2("bounded")
        try await withDNSSService([:], accounts: ["tight": ["maxStaleAge": 0.5]]) { servers, service in
            #expect(try await service.client.get("/v1/default/resolve?host=\(kept)&type=A").status == 200)
            #expect(try await service.client.get("/v1/tight/resolve?host=\(bounded)&type=A").status == 200)

            await servers.dnss.stop()
            #expect(!servers.dnss.isRunning)
            try await Task.sleep(for: .milliseconds(3000))  // 1 s past the TTL of 2 s: beyond tight's 0.5 s

            // A name never cached has nothing to fall back on.
            let never = try await service.client.get("/v1/default/resolve?host=\(TestZone.uniqueTTL2("never"))&type=A")
            #expect([502, 504].contains(never.status), "\(never)")
            #expect(["UpstreamFailed", "UpstreamTimeout"].contains(never.json["error"]?["code"]?.string ?? ""), "\(never)")

            // The cached one is answered stale, the first time after a failed attempt, the
            // second time at once (its retry backs off).
            for attempt in 1...2 {
                let stale = try await service.client.get("/v1/default/resolve?host=\(kept)&type=A")
                #expect(stale.status == 200, "attempt \(attempt): \(stale)")
                #expect(stale.json["ips"]?.strings == TestZone.ttl2V4)
                #expect(stale.json["stale"]?.bool == true)
                #expect(stale.json["source"]?.string == "stale")
                #expect(stale.json["ttl"]?.int == 0)
            }
            #expect(try await accountMetric(service, "httpdns_cache_served_stale_total") == 2)
            #expect(try await statsRecord(service, domain: kept)?["staleNum"]?.int == 2)

            // Expired longer ago than maxStaleAge: the error comes back.
            let tooOld = try await service.client.get("/v1/tight/resolve?host=\(bounded)&type=A")
            #expect([502, 504].contains(tooOld.status), "\(tooOld)")
            // Summed over both accounts (the public listener has no account label): still the
            // default account's two, so "tight" served none.
            #expect(try await accountMetric(service, "httpdns_cache_served_stale_total") == 2)
            #expect(try await statsRecord(service, account: "tight", domain: bounded)?["staleNum"]?.int == 0)
        }
    }

    @Test func excludedHostsGetFreshAnswersOrTheErrorNeverAStaleOne() async throws {
        let excluded = "pinned-\(UInt64.random(in: 0...UInt64.max)).ttl2.example.test"
        let other = TestZone.uniqueTTL2("other")
        let options: [String: TestJSON] = ["reuseExpiredIPEnabled": true, "staleExcludeHosts": [.string(excluded)]]
        try await withDNSSService(options) { servers, service in
            let sub = "www.\(excluded)"  // a subdomain of an excluded host is excluded too
            for host in [excluded, sub, other] {
                #expect(try await service.client.get("/v1/default/resolve?host=\(host)&type=A").status == 200)
            }
            try await Task.sleep(for: .milliseconds(2600))

            // Upstream alive: reuse answers the other host stale at once; excluded hosts wait for upstream.
            let reused = try await service.client.get("/v1/default/resolve?host=\(other)&type=A")
            #expect(reused.json["source"]?.string == "stale", "\(reused)")
            for host in [excluded, sub] {
                let fresh = try await service.client.get("/v1/default/resolve?host=\(host)&type=A")
                #expect(fresh.status == 200, "\(fresh)")
                #expect(fresh.json["source"]?.string == "upstream", "\(host): \(fresh)")
                #expect(fresh.json["stale"]?.bool == false)
            }
            // The background refresh the stale answer started lands: the name's second upstream
            // answer (its stats count it just before storing the entry). A count, not the fresh
            // entry, which expires 2 s after it lands; nor `cache?expired=1`, which would itself
            // start a refresh of the expired entry.
            #expect(
                try await poll {
                    let answered = try await statsRecord(service, domain: other)?["successNum"]?.int ?? 0
                    return answered >= 2 ? true : nil
                } == true, "the background refresh of \(other) never landed")

            // Upstream dead and everything expired again: stale for the other host, the error for excluded ones.
            await servers.dnss.stop()
            try await Task.sleep(for: .milliseconds(2600))
            let stale = try await service.client.get("/v1/default/resolve?host=\(other)&type=A")
            #expect(stale.status == 200, "\(stale)")
            #expect(stale.json["stale"]?.bool == true)
            for host in [excluded, sub] {
                let failed = try await service.client.get("/v1/default/resolve?host=\(host)&type=A")
                #expect([502, 504].contains(failed.status), "\(host): \(failed)")
            }
            #expect(try await statsRecord(service, domain: excluded)?["staleNum"]?.int == 0)
        }
    }
}
