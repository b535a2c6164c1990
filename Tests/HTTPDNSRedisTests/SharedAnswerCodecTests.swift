import Foundation
import HTTPDNSCore
import Testing

@testable import HTTPDNSRedis

@Suite struct SharedAnswerCodecTests {
    static let soa = NegativeAnswerSOA(
        zone: "example.test.", primary: "ns.example.test.", mailbox: "hostmaster.example.test.", serial: 1, refresh: 3600, retry: 1200,
        expire: 604_800, minimum: 45)!

    @Test func anEntryComesBackAsItWasStored() {
        let entries = [
            CacheEntry(addresses: ["192.0.2.1", "2001:db8::1"], originTTL: 300, storedAt: 1_764_000_000.125),
            CacheEntry(addresses: [], originTTL: 60, storedAt: 1_764_000_000, nxdomain: true),
            CacheEntry(addresses: ["192.0.2.9"], originTTL: 30, storedAt: 1_764_000_000.5, origin: .localdns),
            CacheEntry(addresses: [], originTTL: 30, storedAt: 1_764_000_000.25, nxdomain: true, soa: Self.soa),
            CacheEntry(addresses: [], originTTL: 30, storedAt: 1_764_000_000.25, soa: Self.soa),
        ]
        for entry in entries {
            #expect(SharedAnswerCodec.decode(SharedAnswerCodec.encode(entry)) == entry)
        }
    }

    /// Answers without an SOA are still written as version 1, which builds from before the SOA
    /// read; one with an SOA is version 2, the SOA's eight fields after the six.
    @Test func onlyAnAnswerWithAnSOAIsWrittenAsVersion2() {
        let plain = CacheEntry(addresses: [], originTTL: 60, storedAt: 1_764_000_000, nxdomain: true)
        #expect(String(decoding: SharedAnswerCodec.encode(plain), as: UTF8.self) == "1 1764000000.000 60 1 upstream ")
        let withSOA = CacheEntry(addresses: [], originTTL: 30, storedAt: 1_764_000_000.125, nxdomain: true, soa: Self.soa)
        #expect(
            String(decoding: SharedAnswerCodec.encode(withSOA), as: UTF8.self)
                == "2 1764000000.125 30 1 upstream  example.test. ns.example.test. hostmaster.example.test. 1 3600 1200 604800 45")
    }

    /// Values written before version 2 existed (by an older replica, or before an upgrade).
    @Test func version1ValuesStillDecode() {
        #expect(
            SharedAnswerCodec.decode(Array("1 1764000000.000 60 1 upstream ".utf8))
                == CacheEntry(addresses: [], originTTL: 60, storedAt: 1_764_000_000, nxdomain: true))
        #expect(
            SharedAnswerCodec.decode(Array("1 1764000000.500 300 0 localdns 192.0.2.1,192.0.2.2".utf8))
                == CacheEntry(addresses: ["192.0.2.1", "192.0.2.2"], originTTL: 300, storedAt: 1_764_000_000.5, origin: .localdns))
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

    /// The time is written without Foundation's formatter, as `%.3f` writes it: whole seconds,
    /// milliseconds rounded (carrying into the seconds), a sign for a negative time.
    @Test(arguments: [
        0, 0.0004, 0.0006, 1, 1.9996, 59.25, -0.25, -1.9996, 1_764_000_000, 1_764_000_000.125, 1_764_000_000.1234,
        1_764_000_000.9996, 4_102_444_800.5,
    ])
    func theTimeIsWrittenAsPrintfWritesIt(_ seconds: Double) {
        var bytes: [UInt8] = []
        SharedAnswerCodec.appendMilliseconds(seconds, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == String(format: "%.3f", seconds))
    }

    /// Addresses kept packed (up to three IPv4) and kept as text are written alike.
    @Test func packedAndTextAddressesAreWrittenAlike() {
        let packed = CacheEntry(addresses: ["192.0.2.1", "198.51.100.200"], originTTL: 60, storedAt: 1_764_000_000)
        let text = CacheEntry(addresses: ["192.0.2.1", "2001:db8::1"], originTTL: 60, storedAt: 1_764_000_000)
        #expect(
            String(decoding: SharedAnswerCodec.encode(packed), as: UTF8.self) == "1 1764000000.000 60 0 upstream 192.0.2.1,198.51.100.200")
        #expect(
            String(decoding: SharedAnswerCodec.encode(text), as: UTF8.self) == "1 1764000000.000 60 0 upstream 192.0.2.1,2001:db8::1")
    }

    @Test(arguments: [
        "", "1 x 300 0 upstream 192.0.2.1", "3 1764000000 300 0 upstream 192.0.2.1", "1 1764000000 300 2 upstream 192.0.2.1",
        "1 1764000000 300 0 cache 192.0.2.1", "1 1764000000 300 0 upstream not-an-address", "1 1764000000 -1 0 upstream 192.0.2.1",
        "1 1764000000 300 0 upstream 192.0.2.1 extra",
        // Version 2: an SOA on a positive answer, an SOA short of a field or with a bad one, a
        // version-1 value with an SOA, a version-2 value without one.
        "2 1764000000 30 0 upstream 192.0.2.1 example.test. ns.example.test. h.example.test. 1 3600 1200 604800 45",
        "2 1764000000 30 1 upstream  example.test. ns.example.test. h.example.test. 1 3600 1200 604800",
        "2 1764000000 30 1 upstream  example.test. ns.example.test. h.example.test. 1 3600 1200 604800 -1",
        "2 1764000000 30 1 upstream  example.test ns.example.test. h.example.test. 1 3600 1200 604800 45",
        "1 1764000000 30 1 upstream  example.test. ns.example.test. h.example.test. 1 3600 1200 604800 45",
        "2 1764000000 30 1 upstream ",
    ])
    func anythingElseIsAMiss(_ text: String) {
        #expect(SharedAnswerCodec.decode(Array(text.utf8)) == nil)
    }
}
