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

    @Test func deleteOneHostRemovesItAndTheNextResolveAsksUpstream() async throws {
        try await withService { servers, service in
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.v4Only)&type=A")
            let deleted = try await service.client.delete("/v1/default/cache?host=\(TestZone.www)")
            #expect(deleted.status == 200)
            #expect((deleted.json["deleted"]?.int ?? 0) >= 1)
            expectError(try await service.client.get("/v1/default/cache?host=\(TestZone.www)&type=A"),
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
