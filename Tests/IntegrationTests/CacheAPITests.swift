import Foundation
import HTTPDNSTestSupport
import Testing

/// GET/DELETE /v1/{account}/cache.
@Suite("Cache API")
struct CacheAPITests {
    @Test func lookupReturnsAResolvedEntryWithSourceCache() async throws {
        try await withService { _, service in
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            let response = try await service.client.get("/v1/default/cache?host=\(TestZone.www)&type=A")
            #expect(response.status == 200)
            #expect(response.json["source"]?.string == "cache")
            #expect(Set(response.json["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(response.json["origin_ttl"]?.int == Int(TestZone.wwwTTL))
        }
    }

    @Test func lookupOfAnAbsentEntryIs404NotFoundAndDoesNotResolve() async throws {
        try await withService { servers, service in
            let before = try await servers.unbound.queryCount()
            let response = try await service.client.get("/v1/default/cache?host=\(TestZone.unique())&type=A")
            expectError(response, status: 404, code: "NotFound")
            #expect(try await servers.unbound.queryCount() == before)
        }
    }

    @Test func listReturnsEntriesWithTypeAndExpiry() async throws {
        try await withService { _, service in
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=both")
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.v4Only)&type=A")
            let response = try await service.client.get("/v1/default/cache?limit=100")
            #expect(response.status == 200)
            let entries = try #require(response.json["entries"]?.array, "\(response)")
            let www = entries.filter { $0["host"]?.string == TestZone.www }
            #expect(Set(www.compactMap { $0["type"]?.string }) == ["A", "AAAA"])
            let wwwA = try #require(www.first { $0["type"]?.string == "A" })
            #expect(Set(wwwA["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(wwwA["expired"]?.bool == false)
            #expect(wwwA["nxdomain"]?.bool == false)
            #expect(wwwA["origin_ttl"]?.int == Int(TestZone.wwwTTL))
            #expect(entries.contains { $0["host"]?.string == TestZone.v4Only })
            #expect(response.json["next_cursor"] != nil)
        }
    }

    @Test func listPagesThroughAllEntriesWithTheCursor() async throws {
        try await withService { _, service in
            for index in 0..<5 {
                _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.bulkHost(index))&type=A")
            }
            var seen: [String] = []
            var cursor: String?
            for _ in 0..<10 {
                let path = "/v1/default/cache?limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await service.client.get(path).json
                let entries = try #require(page["entries"]?.array)
                #expect(entries.count <= 2)
                seen += entries.compactMap { $0["host"]?.string }
                cursor = page["next_cursor"]?.string
                if cursor == nil { break }
            }
            #expect(Set(seen) == Set((0..<5).map { TestZone.bulkHost($0) }))
            #expect(seen.count == 5)
        }
    }

    @Test func pagingListsAFewThousandPreloadedEntriesOnceEachAndStatsPageTheSameWay() async throws {
        try await withService { _, service in
            let hosts = (0..<TestZone.bulkCount).map { TestZone.bulkHost($0) } + (0..<2880).map { TestZone.nxdomain("p\($0)") }
            let preload = try await service.client.post(
                "/v1/default/preload", json: ["hosts": .array(hosts.map { .string($0) }), "type": "A"])
            try #require(preload.status == 200, "\(preload)")
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await service.client.get("/v1/default/cache?limit=250" + (cursor.map { "&cursor=\($0)" } ?? ""))
                try #require(page.status == 200, "\(page)")
                let entries = try #require(page.json["entries"]?.array)
                #expect(entries.count <= 250)
                seen += entries.compactMap { $0["host"]?.string }
                cursor = page.json["next_cursor"]?.string
                pages += 1
            } while cursor != nil && pages < 100
            #expect(seen.count == hosts.count)
            #expect(Set(seen) == Set(hosts))
            let other = try await service.client.get("/v1/default/cache?cursor=garbage")
            expectError(other, status: 400, code: "InvalidParameter")

            var domains: [String] = []
            var statsCursor: String?
            pages = 0
            repeat {
                let page = try await service.client.get("/v1/default/stats?limit=700" + (statsCursor.map { "&cursor=\($0)" } ?? ""))
                try #require(page.status == 200, "\(page)")
                let records = try #require(page.json.array)
                #expect(records.count <= 700)
                domains += records.compactMap { $0["domain"]?.string }
                statsCursor = page.headers.first { $0.name.lowercased() == "x-next-cursor" }?.value
                pages += 1
            } while statsCursor != nil && pages < 100
            #expect(domains.count == hosts.count)
            #expect(Set(domains) == Set(hosts))
            let one = try await service.client.get("/v1/default/stats?domain=\(TestZone.bulkHost(7))")
            #expect(one.json.array?.compactMap { $0["domain"]?.string } == [TestZone.bulkHost(7)])
        }
    }

    @Test func deleteOneHostRemovesItAndTheNextResolveAsksUpstream() async throws {
        try await withService { servers, service in
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.v4Only)&type=A")
            let deleted = try await service.client.delete("/v1/default/cache?host=\(TestZone.www)")
            #expect(deleted.status == 200)
            #expect((deleted.json["deleted"]?.int ?? 0) >= 1)
            expectError(
                try await service.client.get("/v1/default/cache?host=\(TestZone.www)&type=A"),
                status: 404, code: "NotFound")
            #expect(try await service.client.get("/v1/default/cache?host=\(TestZone.v4Only)&type=A").status == 200)
            let before = try await servers.unbound.queryCount()
            let again = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A").json
            #expect(again["source"]?.string == "upstream")
            #expect(try await servers.unbound.queryCount() > before)
        }
    }

    @Test func deleteAllEmptiesTheAccountCache() async throws {
        try await withService { _, service in
            for index in 0..<3 {
                _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.bulkHost(index))&type=A")
            }
            let deleted = try await service.client.delete("/v1/default/cache")
            #expect(deleted.status == 200)
            #expect(deleted.json["deleted"]?.int == 3)
            let list = try await service.client.get("/v1/default/cache?limit=100").json
            #expect(list["entries"]?.array?.isEmpty == true)
        }
    }
}
