import Testing

@testable import HTTPDNSCore

@Suite struct AddressListTests {
    @Test(arguments: ["0.0.0.0", "1.2.3.4", "10.0.99.100", "127.0.0.12", "255.255.255.255", "192.168.1.0"])
    func canonicalIPv4IsPackedAndGivesBackTheSameText(text: String) {
        let list = AddressList([text])
        #expect(list.packedIPv4 != nil)
        #expect(list.strings == [text])
    }

    @Test(arguments: [
        "01.2.3.4", "1.2.3.04", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.", ".1.2.3", "1..2.3",
        " 1.2.3.4", "1.2.3.4 ", "+1.2.3.4", "::1", "2001:db8::1", "::ffff:1.2.3.4", "1.2.3.4x", "0000.0.0.0",
    ])
    func anythingElseIsKeptAsTextUnchanged(text: String) {
        #expect(AddressList.canonicalIPv4(text) == nil)
        let list = AddressList([text])
        #expect(list.packedIPv4 == nil)
        #expect(list.strings == [text])
    }

    @Test func upToThreeIPv4AddressesArePackedInOrder() {
        let three = ["9.8.7.6", "1.1.1.1", "200.100.50.25"]
        let list = AddressList(three)
        #expect(list.packedIPv4?.count == 3)
        #expect(list.packedIPv4?.first == 0x0908_0706)
        #expect(list.strings == three)
        #expect(list.count == 3)
        let four = three + ["4.4.4.4"]
        #expect(AddressList(four).packedIPv4 == nil)
        #expect(AddressList(four).strings == four)
    }

    @Test func oneNonCanonicalAddressKeepsTheWholeListAsText() {
        let mixed = ["1.2.3.4", "2001:db8::1"]
        #expect(AddressList(mixed).packedIPv4 == nil)
        #expect(AddressList(mixed).strings == mixed)
    }

    /// A list built address by address (a reply's walk) equals the list of the same texts, packed
    /// or not, and gives the texts back in order.
    @Test(arguments: [
        ["192.0.2.1"], ["192.0.2.1", "0.0.0.0"], ["9.8.7.6", "1.1.1.1", "255.255.255.255"],
        ["1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4", "5.5.5.5"], ["2001:db8::1"], ["2001:db8::1", "::1"],
        ["1.2.3.4", "2001:db8::1"], ["2001:db8::1", "1.2.3.4"],
    ])
    func appendingAddressesGivesTheListOfTheirTexts(texts: [String]) {
        var list = AddressList([])
        for text in texts { list.append(IPAddress(text)!) }
        #expect(list == AddressList(texts))
        #expect(list.strings == texts)
        #expect((list.packedIPv4 != nil) == (AddressList(texts).packedIPv4 != nil))
    }

    @Test func appendingToANegativeListDropsItsSOA() throws {
        let soa = try #require(NegativeAnswerSOA("example. ns.example. hostmaster.example. 1 2 3 4 5"))
        var list = AddressList(negativeWith: soa)
        list.append(IPAddress("192.0.2.1")!)
        #expect(list.soa == nil)
        #expect(list == AddressList(["192.0.2.1"]))
    }

    @Test func emptyListsAreNegativeEntries() {
        let entry = CacheEntry(addresses: [], originTTL: 60, storedAt: 0)
        #expect(entry.isNegative)
        #expect(entry.addressList.isEmpty)
        #expect(AddressList([]).strings.isEmpty)
    }

    @Test func equalTextGivesEqualLists() {
        #expect(AddressList(["1.2.3.4"]) == ["1.2.3.4"])
        #expect(AddressList(["1.2.3.4"]) != AddressList(["1.2.3.5"]))
        var entry = CacheEntry(addresses: ["1.2.3.4", "5.6.7.8"], originTTL: 60, storedAt: 0)
        entry.addresses.reverse()
        #expect(entry == CacheEntry(addresses: ["5.6.7.8", "1.2.3.4"], originTTL: 60, storedAt: 0))
        #expect(ResolvedAnswer(entry: entry, at: 1, source: .cache).addresses == ["5.6.7.8", "1.2.3.4"])
    }

    /// The point of packing: a cached entry of up to three IPv4 addresses owns no heap object.
    @Test func aPackedListFitsInSixteenBytes() {
        #expect(MemoryLayout<AddressList>.size <= 16)
    }

    @Test(arguments: [
        "", "127.0.0.1", "127.0.0.11,127.0.0.12", ",1.2.3.4,,", "0.0.0.0,255.255.255.255,9.10.99.100",
        "1.1.1.1,2.2.2.2,3.3.3.3,4.4.4.4", "01.2.3.4,1.2.3.4", "::1,1.2.3.4", "2001:db8::1", "1.2.3", "1.2.3.4.5",
    ])
    func theStoredTextReadsAsItsSplitStrings(text: String) {
        var copy = text
        let list = copy.withUTF8 { AddressList(commaSeparated: $0) }
        let strings = text.split(separator: ",").map(String.init)
        #expect(list == AddressList(strings))
        #expect(list.strings == strings)
        var written = Array("kept".utf8)
        list.appendCommaSeparated(to: &written)
        #expect(String(decoding: written, as: UTF8.self) == "kept" + strings.joined(separator: ","))
    }

    @Test func everyOctetValueIsWrittenInEveryPosition() {
        for octet in UInt32(0)...255 {
            for shift in [UInt32(24), 16, 8, 0] {
                let number = octet << shift | (shift == 0 ? 0x0A00_0000 : 7)
                let parts = [number >> 24, number >> 16 & 0xFF, number >> 8 & 0xFF, number & 0xFF]
                let text = parts.map(String.init).joined(separator: ".")
                #expect(AddressList.dottedQuad(number) == text)
                var bytes = Array("x,".utf8)
                AddressList.appendDottedQuad(number, to: &bytes)
                #expect(String(decoding: bytes, as: UTF8.self) == "x," + text)
            }
        }
    }
}
