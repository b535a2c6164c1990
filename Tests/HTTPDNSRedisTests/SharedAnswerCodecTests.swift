import HTTPDNSCore
@testable import HTTPDNSRedis
import Testing

@Suite struct SharedAnswerCodecTests {
    @Test func anEntryComesBackAsItWasStored() {
        let entries = [
            CacheEntry(addresses: ["192.0.2.1", "2001:db8::1"], originTTL: 300, storedAt: 1_764_000_000.125),
            CacheEntry(addresses: [], originTTL: 60, storedAt: 1_764_000_000, nxdomain: true),
            CacheEntry(addresses: ["192.0.2.9"], originTTL: 30, storedAt: 1_764_000_000.5, origin: .localdns),
        ]
        for entry in entries {
            #expect(SharedAnswerCodec.decode(SharedAnswerCodec.encode(entry)) == entry)
        }
    }

    /// The line keeps storedAt to the millisecond, rounded to the nearest: another replica that
    /// reads the answer within that half millisecond still sees the origin TTL, not one more.
    @Test func anAnswerReadAtOnceShowsItsOriginTTL() throws {
        let storedAt = 1_764_000_000.0006
        let entry = CacheEntry(addresses: ["192.0.2.1"], originTTL: 300, storedAt: storedAt)
        let shared = try #require(SharedAnswerCodec.decode(SharedAnswerCodec.encode(entry)))
        #expect(shared.storedAt > storedAt)
        #expect(shared.remainingTTL(at: storedAt + 0.0001) == 300)
    }

    @Test(arguments: [
        "", "1 x 300 0 upstream 192.0.2.1", "2 1764000000 300 0 upstream 192.0.2.1", "1 1764000000 300 2 upstream 192.0.2.1",
        "1 1764000000 300 0 cache 192.0.2.1", "1 1764000000 300 0 upstream not-an-address", "1 1764000000 -1 0 upstream 192.0.2.1",
        "1 1764000000 300 0 upstream 192.0.2.1 extra",
    ])
    func anythingElseIsAMiss(_ text: String) {
        #expect(SharedAnswerCodec.decode(Array(text.utf8)) == nil)
    }
}
