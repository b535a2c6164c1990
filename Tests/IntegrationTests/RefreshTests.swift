import Foundation
import HTTPDNSTestSupport
import Testing

/// Refresh-ahead and `POST /v1/{account}/cache/refresh`, counted at the JSON responder.
@Suite("Refresh")
struct RefreshTests {
    @Test func requestsInTheLastTenthOfTheTTLRefreshTheEntryOnceBeforeItExpires() async throws {
        try await withJSONUpstreamAccount { servers, service in
            // The window is one second of wall-clock time (TTL 3 s: the last second, 10% but at
            // least 1 s). A loaded machine can deliver the requests meant for it after the entry
            // expired, or the last request after the refreshed entry expired too; such an attempt
            // shows nothing about refresh-ahead, so it is made again with a new name. An attempt
            // whose requests were certainly answered within their windows is checked in full.
            for attempt in 1...3 {
                let name = TestZone.uniqueTTL3("ahead")
                let path = "/v1/default/resolve?host=\(name)&type=A"
                let prefetchesBefore = try await accountMetric(service, "httpdns_prefetch_total")
                let sentAt = Date()  // the entry is stored after this...
                let first = try await service.client.get(path)
                let resolvedAt = Date()  // ...and before this
                #expect(first.json["source"]?.string == "upstream", "\(first)")
                #expect(first.json["origin_ttl"]?.int == Int(TestZone.ttl3))

                // From 2 s after resolvedAt the window has begun; until 3 s after sentAt it has not
                // ended. The three requests go at once, as early as certain: one after the other
                // they took most of the second on a loaded machine.
                try await sleep(until: 2.05, after: resolvedAt)
                let hitsSentAt = Date()  // the refreshed entry is stored after this
                async let hit1 = service.client.get(path)
                async let hit2 = service.client.get(path)
                async let hit3 = service.client.get(path)
                let hits = try await [hit1, hit2, hit3]
                guard Date() < sentAt.addingTimeInterval(3) else {
                    print(
                        "refresh-ahead attempt \(attempt): the requests were answered \(Date().timeIntervalSince(sentAt)) s after the first was sent, maybe past the window: trying again with a new name"
                    )
                    continue
                }
                for hit in hits {
                    #expect(hit.json["source"]?.string == "cache", "\(hit)")
                    #expect(hit.json["stale"]?.bool == false)
                    #expect(hit.json["ips"]?.strings == TestZone.ttl3V4)
                }
                let asked = try await poll { () -> Int? in
                    let count = try await servers.json.requests(for: name).count
                    return count >= 2 ? count : nil
                }
                #expect(asked == 2, "three requests in the window, one refresh: \(String(describing: asked))")
                #expect(try await accountMetric(service, "httpdns_prefetch_total") - prefetchesBefore == 1)
                #expect(try await statsRecord(service, domain: name)?["prefetchNum"]?.int == 1)

                // Past the first answer's expiry the name is still a fresh cache hit: it never went
                // cold. The refreshed entry (TTL 3 s) is fresh until at least 3 s after hitsSentAt.
                try await sleep(until: 3.6, after: resolvedAt)
                let later = try await service.client.get(path)
                guard Date() < hitsSentAt.addingTimeInterval(3) else {
                    print(
                        "refresh-ahead attempt \(attempt): the later request was answered \(Date().timeIntervalSince(hitsSentAt)) s after the refreshing ones were sent, maybe past the refreshed entry's TTL: trying again with a new name"
                    )
                    continue
                }
                #expect(later.json["source"]?.string == "cache", "\(later)")
                #expect(later.json["stale"]?.bool == false)
                #expect((later.json["ttl"]?.int ?? 0) > 0)
                return
            }
            Issue.record("in three attempts the machine never answered the requests within the refresh-ahead window and the refreshed TTL")
        }
    }

    @Test func cacheRefreshReResolvesEveryCachedEntryInTheBackground() async throws {
        let names = (0..<3).map { TestZone.unique("refresh\($0)") }
        try await withJSONUpstreamAccount { servers, service in
            for name in names {
                #expect(try await service.client.get("/v1/default/resolve?host=\(name)&type=A").status == 200)
            }
            try await servers.json.clearRequests()
            let prefetchesBefore = try await accountMetric(service, "httpdns_prefetch_total")

            let response = try await service.client.request("POST", "/v1/default/cache/refresh")
            #expect(response.status == 202, "\(response)")
            #expect(response.json["refreshing"]?.int == names.count, "\(response)")

            let asked = try await poll { () -> [Int]? in
                var counts: [Int] = []
                for name in names { counts.append(try await servers.json.requests(for: name).count) }
                return counts.allSatisfy { $0 >= 1 } ? counts : nil
            }
            #expect(asked == [1, 1, 1], "one upstream query per cached entry: \(String(describing: asked))")
            #expect(try await servers.json.requests().count == names.count)
            #expect(try await accountMetric(service, "httpdns_prefetch_total") - prefetchesBefore == Double(names.count))
        }
    }

    @Test func cacheRefreshMakesAChangedRecordVisibleBeforeTheTTLRunsOut() async throws {
        let name = TestZone.unique("rotated")
        let newAddress = "127.0.0.75"
        try await withJSONUpstreamAccount { servers, service in
            let path = "/v1/default/resolve?host=\(name)&type=A"
            #expect(try await service.client.get(path).json["ips"]?.strings == TestZone.wildV4)
            try await servers.unbound.setAddresses(of: name, [newAddress], ttl: 300)

            // TTL 300: without a refresh the old address stays.
            let cached = try await service.client.get(path)
            #expect(cached.json["ips"]?.strings == TestZone.wildV4, "\(cached)")
            #expect(cached.json["source"]?.string == "cache")

            let response = try await service.client.request("POST", "/v1/default/cache/refresh")
            #expect(response.status == 202, "\(response)")
            let updated = try await poll { () -> TestJSON? in
                let body = try await service.client.get(path).json
                // Not `? body : nil`: TestJSON is nil-literal-convertible, and that nil would be `.null`.
                guard body["ips"]?.strings == [newAddress] else { return nil }
                return body
            }
            #expect(updated?["source"]?.string == "cache", "\(String(describing: updated))")
            #expect(updated?["stale"]?.bool == false)
        }
    }
}
