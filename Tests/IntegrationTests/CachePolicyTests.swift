import Foundation
import HTTPDNSTestSupport
import Testing

/// TTL caps, expiry and per-account cache switches, observed through the real binary.
@Suite("Cache policy")
struct CachePolicyTests {
    @Test func maxCacheTTLCapsTheTTLOfLongAnswers() async throws {
        try await withService(configure: { servers, options in
            options.config = ["accounts": ["default": loopbackAccount(servers, ["maxCacheTTL": 100])]]
        }) { _, service in
            let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A").json
            let ttl = try #require(body["ttl"]?.int, "\(body)")
            #expect(ttl > 0 && ttl <= 100)
        }
    }

    @Test func expiredEntryIsNotServedAsFreshAndIsResolvedAgain() async throws {
        try await withService(upstreams: { [$0.json.upstreamSpec] }) { servers, service in
            let first = try await service.client.get("/v1/default/resolve?host=\(TestZone.shortTTLName)&type=A").json
            #expect(first["ips"]?.strings == TestZone.shortTTLV4)
            #expect(first["origin_ttl"]?.int == 5)
            try await Task.sleep(for: .seconds(6))
            let second = try await service.client.get("/v1/default/resolve?host=\(TestZone.shortTTLName)&type=A").json
            #expect(second["ips"]?.strings == TestZone.shortTTLV4)
            #expect(second["source"]?.string != "cache", "\(second)")
            if second["source"]?.string == "stale" { #expect(second["stale"]?.bool == true) }
            // Either way the name goes upstream again (at once, or as a background refresh). The
            // refresh runs after the stale reply: polled with the generous hang guard, not the 2 s
            // (40 × 50 ms) a loaded machine can take to get a background task and a python
            // responder scheduled.
            let asked = try await poll { () -> Int? in
                let count = try await servers.json.requests(for: TestZone.shortTTLName).count
                return count >= 2 ? count : nil
            }
            #expect(asked != nil, "the name never went upstream a second time")
        }
    }

    @Test func expiredEntriesAreListedAsExpiredAndLookupNeedsExpiredFlag() async throws {
        try await withService { _, service in
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.shortTTLName)&type=A")
            try await Task.sleep(for: .seconds(6))
            let list = try await service.client.get("/v1/default/cache?limit=100").json
            let entry = list["entries"]?.array?.first { $0["host"]?.string == TestZone.shortTTLName }
            #expect(entry?["expired"]?.bool == true, "\(list)")
            expectError(
                try await service.client.get("/v1/default/cache?host=\(TestZone.shortTTLName)&type=A"),
                status: 404, code: "NotFound")
            let withFlag = try await service.client.get("/v1/default/cache?host=\(TestZone.shortTTLName)&type=A&expired=1")
            #expect(withFlag.status == 200)
            #expect(withFlag.json["ips"]?.strings == TestZone.shortTTLV4)
        }
    }

    @Test func accountWithCacheDisabledAsksTheUpstreamEveryTime() async throws {
        try await withService(
            upstreams: { [$0.json.upstreamSpec] },
            configure: { servers, options in
                options.config = [
                    "accounts": [
                        "default": loopbackAccount(
                            servers, upstreams: [servers.json.upstreamSpec],
                            ["cacheEnable": false])
                    ]
                ]
            }
        ) { servers, service in
            for _ in 0..<3 {
                let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A").json
                #expect(body["source"]?.string == "upstream")
            }
            #expect(try await servers.json.requests(for: TestZone.www).count == 3)
        }
    }

    @Test func accountsHaveSeparateCaches() async throws {
        try await withService(
            upstreams: { [$0.json.upstreamSpec] },
            configure: { servers, options in
                options.config = [
                    "accounts": [
                        "default": loopbackAccount(servers, upstreams: [servers.json.upstreamSpec]),
                        "other": loopbackAccount(servers, upstreams: [servers.json.upstreamSpec]),
                    ]
                ]
            }
        ) { servers, service in
            let name = TestZone.unique("acct")
            let a = try await service.client.get("/v1/default/resolve?host=\(name)&type=A").json
            let b = try await service.client.get("/v1/other/resolve?host=\(name)&type=A").json
            #expect(a["source"]?.string == "upstream")
            #expect(b["source"]?.string == "upstream")
            #expect(try await servers.json.requests(for: name).count == 2)
            expectError(
                try await service.client.get("/v1/other/cache?host=\(TestZone.www)&type=A"),
                status: 404, code: "NotFound")
        }
    }
}
