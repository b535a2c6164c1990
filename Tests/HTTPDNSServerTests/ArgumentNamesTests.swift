import Testing

@testable import HTTPDNSServer

/// A fast route's argument names, held inline: every position of a full list is found, in the
/// order given, and nothing else is.
struct ArgumentNamesTests {
    @Test func everyNameOfAFullListIsFoundAtItsPosition() {
        let names = ArgumentNames("a", "bb", "ccc", "host", "type", "client_ip", "short", "enc", "kid", "sign")
        let texts = ["a", "bb", "ccc", "host", "type", "client_ip", "short", "enc", "kid", "sign"]
        #expect(names.count == texts.count)
        for (position, text) in texts.enumerated() {
            #expect(names[position].description == text)
            let found = Array(text.utf8).withUnsafeBytes { names.index(of: $0) }
            #expect(found == position, "\(text)")
        }
        for other in ["", "b", "hosts", "Host", "sig"] {
            #expect(Array(other.utf8).withUnsafeBytes { names.index(of: $0) } == nil, "\(other)")
        }
    }

    @Test func aShortListHasOnlyItsOwnNames() {
        let names = ArgumentNames("dns")
        #expect(names.count == 1)
        #expect(Array("dns".utf8).withUnsafeBytes { names.index(of: $0) } == 0)
        // The unused positions hold empty names, never matched: an empty argument name is not one of them.
        #expect(Array("".utf8).withUnsafeBytes { names.index(of: $0) } == nil)
    }
}
