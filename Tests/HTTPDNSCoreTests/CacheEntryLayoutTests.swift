import Testing

@testable import HTTPDNSCore

/// What one cached answer costs inline, which every hit copies. The SOA a negative answer keeps
/// is a reference in its empty address list's room: an entry, a cache slot and a resolved answer
/// are the size they would be without it (34, 40 and 40 bytes).
@Suite struct CacheEntryLayoutTests {
    @Test func theSOAAddsNothingToAnEntryASlotOrAnAnswer() {
        #expect(MemoryLayout<AddressList>.size == 14)
        #expect(MemoryLayout<CacheEntry>.size == 34)
        #expect(MemoryLayout<AnswerCache.Slot>.stride == 40)
        #expect(MemoryLayout<AnswerCache.Slot?>.stride == 40)
        // The list, two TTLs, the source and three flags (stale, nxdomain, synthesized): the flag
        // DNS64 added fits in the stride the answer had.
        #expect(MemoryLayout<ResolvedAnswer>.size == MemoryLayout<AddressList>.stride + 12)
        #expect(MemoryLayout<ResolvedAnswer>.stride == 32)
    }

    @Test func onlyANegativeEntryKeepsAnSOAAndSettingNoAddressesKeepsIt() throws {
        let soa = try #require(NegativeAnswerSOA("example. ns.example. hostmaster.example. 1 2 3 4 5"))
        var negative = CacheEntry(addresses: [], originTTL: 30, storedAt: 0, nxdomain: true, soa: soa)
        #expect(negative.soa == soa)
        #expect(negative.addressList.isEmpty && negative.addresses == [] && negative.addressList.count == 0)
        negative.addresses = []
        #expect(negative.soa == soa)
        #expect(ResolvedAnswer(entry: negative, at: 0, source: .cache).soa == soa)
        #expect(negative != CacheEntry(addresses: [], originTTL: 30, storedAt: 0, nxdomain: true))
        #expect(CacheEntry(addresses: ["192.0.2.1"], originTTL: 30, storedAt: 0, soa: soa).soa == nil)
        // A resolved answer follows the same rule (both ask `AddressList.carrying`).
        var answer = ResolvedAnswer(addresses: [], ttl: 30, originTTL: 30, source: .upstream, nxdomain: true, soa: soa)
        answer.addresses = []
        #expect(answer.soa == soa)
        #expect(ResolvedAnswer(addresses: ["192.0.2.1"], ttl: 30, originTTL: 30, source: .upstream, soa: soa).soa == nil)
    }

    @Test(arguments: [
        "example. ns.example. hostmaster.example. 1 2 3 4",
        "example. ns.example. hostmaster.example. 1 2 3 4 5 6",
        "example. ns.example. hostmaster.example. 1 2 3 4 x",
        "example ns.example. hostmaster.example. 1 2 3 4 5",
        "example.  hostmaster.example. 1 2 3 4 5",
    ])
    func storedSOATextThatIsNotEightFieldsOfTheRightKindDoesNotRead(_ text: String) {
        #expect(NegativeAnswerSOA(text) == nil)
    }
}
