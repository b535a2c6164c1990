@testable import HTTPDNSCore
import Testing

/// What one cached answer costs inline (issue 16: an entry grows by at most 16 bytes). The SOA a
/// negative answer keeps is a reference (8 bytes, nil for positive answers) to a record out of
/// line: a cache slot went from 40 to 48 bytes with it.
@Suite struct CacheEntryLayoutTests {
    @Test func theSOAReferenceAddsAtMost8BytesToACacheSlot() {
        #expect(MemoryLayout<CacheEntry>.size == 40)
        #expect(MemoryLayout<AnswerCache.Slot>.stride == 48)
        #expect(MemoryLayout<AnswerCache.Slot?>.stride == 48)
    }

    @Test func onlyANegativeEntryKeepsAnSOA() throws {
        let soa = try #require(SOARecord("example. ns.example. hostmaster.example. 1 2 3 4 5"))
        #expect(CacheEntry(addresses: [], originTTL: 30, storedAt: 0, nxdomain: true, soa: soa).soa == soa)
        #expect(CacheEntry(addresses: ["192.0.2.1"], originTTL: 30, storedAt: 0, soa: soa).soa == nil)
    }

    @Test(arguments: [
        "example. ns.example. hostmaster.example. 1 2 3 4",
        "example. ns.example. hostmaster.example. 1 2 3 4 5 6",
        "example. ns.example. hostmaster.example. 1 2 3 4 x",
        "example ns.example. hostmaster.example. 1 2 3 4 5",
        "example.  hostmaster.example. 1 2 3 4 5",
    ])
    func storedSOATextThatIsNotEightFieldsOfTheRightKindDoesNotRead(_ text: String) {
        #expect(SOARecord(text) == nil)
    }
}
