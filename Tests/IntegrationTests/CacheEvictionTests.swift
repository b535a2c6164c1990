import Foundation
import HTTPDNSTestSupport
import Testing

/// The answer cache's eviction (S3-FIFO) against the real binary: a flood of names asked once
/// does not push out the names in use.
@Suite("Cache eviction")
struct CacheEvictionTests {
    static let limit = 50
    static let hotCount = 10
    static let rounds = 10
    /// Random names between two reads of the hot set: twice the cache, so that under LRU every
    /// hot name would be evicted before it is read again.
    static let floodPerRound = 2 * limit

    @Test func aFloodOfRandomMissesLeavesAHotSetCached() async throws {
        try await withService(configure: { servers, options in
            options.config = ["accounts": ["default": loopbackAccount(servers, ["cacheCountLimit": .number(Double(Self.limit))])]]
        }) { _, service in
            let reader = HTTPClient(port: service.port)
            let flooder = HTTPClient(port: service.port)
            let hot = (0..<Self.hotCount).map { TestZone.unique("hot\($0)") }
            // The hot set is asked for, then used once more: that is what earns it its place.
            for _ in 0..<2 {
                for name in hot { #expect(try await reader.get("/v1/default/resolve?host=\(name)&type=A").status == 200) }
            }
            let hitsBefore = try await service.metrics().sum("httpdns_cache_hits_total", [:])
            // Counted, not timed: rounds of a flood of never-asked names, each followed by one
            // read of every hot name.
            var fromCache = 0
            var reads = 0
            for round in 0..<Self.rounds {
                for index in 0..<Self.floodPerRound {
                    let flood = try await flooder.get("/v1/default/resolve?host=\(TestZone.unique("flood\(round)x\(index)"))&type=A")
                    #expect(flood.status == 200)
                    #expect(flood.json["source"]?.string == "upstream")
                }
                for name in hot {
                    let answer = try await reader.get("/v1/default/resolve?host=\(name)&type=A")
                    #expect(answer.status == 200)
                    reads += 1
                    if answer.json["source"]?.string == "cache" { fromCache += 1 }
                }
            }
            let ratio = Double(fromCache) / Double(reads)
            #expect(ratio >= 0.95, "hot set hit ratio \(ratio) (\(fromCache) of \(reads) reads from the cache)")
            let metrics = try await service.metrics()
            // The flood never hits: every hit the service counted is a hot read from the cache.
            #expect(metrics.sum("httpdns_cache_hits_total", [:]) - hitsBefore == Double(fromCache))
            #expect(metrics.sum("httpdns_cache_entries", [:]) <= Double(Self.limit))
        }
    }
}
