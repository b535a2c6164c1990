import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// The byte-level JSON writer of every response.
@Suite struct JSONWriterTests {
    private func text(_ write: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        write(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test func integersAreWrittenInDecimal() {
        #expect(text { $0.number(0) } == "0")
        #expect(text { $0.number(7) } == "7")
        #expect(text { $0.number(UInt32(300)) } == "300")
        #expect(text { $0.number(-42) } == "-42")
        #expect(text { $0.number(UInt64.max) } == "18446744073709551615")
        #expect(text { $0.number(Int64.min) } == "-9223372036854775808")
    }

    @Test func stringsAreEscaped() {
        #expect(text { $0.string("a\"b\\c\nd\u{1}") } == #""a\"b\\c\nd\u0001""#)
        #expect(text { $0.key("ttl") } == #""ttl":"#)
        #expect(text { $0.stringArray(["192.0.2.1", "::1"]) } == #"["192.0.2.1","::1"]"#)
    }

    @Test func theSingleAnswerRenderingMatchesTheGeneralOne() {
        let host = HostName("www.example.test")!
        for (family, answer) in [
            (RecordFamily.a, ResolvedAnswer(addresses: ["127.0.0.1", "127.0.0.2"], ttl: 30, originTTL: 60, source: .cache)),
            (.aaaa, ResolvedAnswer(addresses: ["::1"], ttl: 0, originTTL: 60, source: .stale, stale: true)),
            (.a, ResolvedAnswer(addresses: [], ttl: 5, originTTL: 30, source: .cache, nxdomain: true)),
            (
                .a,
                ResolvedAnswer(
                    addresses: ["0.0.0.0", "9.10.99.100", "255.255.255.255"], ttl: 4_294_967_295, originTTL: 4_294_967_295,
                    source: .upstream)
            ),
            (
                .a,
                ResolvedAnswer(
                    addresses: ["1.1.1.1", "22.22.22.22", "199.199.199.199", "8.8.8.8"], ttl: 9, originTTL: 10, source: .localdns)
            ),
            (
                .aaaa,
                ResolvedAnswer(
                    addresses: ["2001:db8:ffff:ffff:ffff:ffff:255.255.255.255"], ttl: 999, originTTL: 1000, source: .stale, stale: true)
            ),
            (.a, ResolvedAnswer(addresses: ["01.2.3.4", "a\"b\\c\u{1}"], ttl: 100, originTTL: 1000, source: .cache)),
        ] {
            for short in [false, true] {
                let general = AnswerRendering.response(
                    [HostResult(host: host, families: [(family, .success(answer))])], batch: false, short: short)
                var name = host.value
                let hit = name.withUTF8 {
                    HTTPResponse(hit: AnswerRendering.fastSingle(host: $0, family: family, answer: answer, short: short))
                }
                #expect(hit == general)
            }
        }
    }

    /// An answer of both families says the least cached source of the two, the smaller TTLs,
    /// stale when either is, and `nodata` only when neither family has an address.
    @Test func bothFamiliesCombineIntoOneAnswer() {
        let host = HostName("www.example.test")!
        func render(_ a: ResolvedAnswer, _ aaaa: ResolvedAnswer?) -> String {
            var families: [(RecordFamily, FamilyOutcome)] = [(.a, .success(a))]
            if let aaaa {
                families.append((.aaaa, .success(aaaa)))
            } else {
                families.append((.aaaa, .failure(ResolveFailure(timedOut: true, message: "timed out"))))
            }
            let response = AnswerRendering.response([HostResult(host: host, families: families)], batch: false, short: false)
            return String(decoding: response.body, as: UTF8.self)
        }
        let cached = ResolvedAnswer(addresses: ["192.0.2.1"], ttl: 30, originTTL: 60, source: .cache)
        let fresh = ResolvedAnswer(addresses: ["2001:db8::1"], ttl: 50, originTTL: 50, source: .upstream)
        let stale = ResolvedAnswer(addresses: ["2001:db8::2"], ttl: 0, originTTL: 40, source: .stale, stale: true)
        let empty = ResolvedAnswer(addresses: [], ttl: 10, originTTL: 10, source: .upstream)
        #expect(
            render(cached, fresh)
                == #"{"host":"www.example.test","ips":["192.0.2.1"],"ipsv6":["2001:db8::1"],"ttl":30,"origin_ttl":50,"source":"upstream","stale":false}"#
        )
        #expect(
            render(cached, stale)
                == #"{"host":"www.example.test","ips":["192.0.2.1"],"ipsv6":["2001:db8::2"],"ttl":0,"origin_ttl":40,"source":"stale","stale":true}"#
        )
        #expect(
            render(empty, empty)
                == #"{"host":"www.example.test","ips":[],"ipsv6":[],"ttl":10,"origin_ttl":10,"source":"upstream","stale":false,"nodata":true}"#
        )
        // A family that failed is left out: the other answers alone.
        #expect(
            render(cached, nil)
                == #"{"host":"www.example.test","ips":["192.0.2.1"],"ipsv6":[],"ttl":30,"origin_ttl":60,"source":"cache","stale":false}"#
        )
        #expect(render(empty, fresh).contains(#""source":"upstream","stale":false}"#))
    }
}

@Suite struct JSONWriterAddressTests {
    private func bytes(_ body: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        body(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test(arguments: [
        ["0.0.0.0"], ["9.10.99.100", "255.1.20.200"], ["127.0.0.12", "127.0.0.11", "8.8.8.8"],
        ["1.2.3.4", "::1"], ["01.2.3.4"], [], ["1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4"],
    ])
    func addressArrayWritesWhatStringArrayWrites(addresses: [String]) {
        #expect(bytes { $0.addressArray(AddressList(addresses)) } == bytes { $0.stringArray(addresses) })
    }
}

@Suite struct ByteCursorTests {
    @Test(arguments: [0, 9, 10, 99, 100, 255, 999, 1000, 9999, 86_399, 100_000, 4_294_967_295] as [UInt32])
    func decimalsAreWrittenAsSwiftWritesThem(value: UInt32) {
        let bytes = [UInt8](unsafeUninitializedCapacity: ByteCursor.maximumDecimal) { buffer, count in
            var cursor = ByteCursor(buffer)
            cursor.decimal(value)
            count = cursor.count
        }
        #expect(String(decoding: bytes, as: UTF8.self) == String(value))
    }

    @Test func everyOctetValueIsWrittenInDecimal() {
        for value in UInt32(0)...255 {
            let bytes = [UInt8](unsafeUninitializedCapacity: AddressList.maximumDottedQuad) { buffer, count in
                var cursor = ByteCursor(buffer)
                cursor.ipv4(value << 24 | (255 - value) << 16 | value << 8 | value)
                count = cursor.count
            }
            #expect(String(decoding: bytes, as: UTF8.self) == "\(value).\(255 - value).\(value).\(value)")
        }
    }

    @Test func theLongestAddressFitsItsBound() {
        let bytes = [UInt8](unsafeUninitializedCapacity: AddressList.maximumDottedQuad) { buffer, count in
            var cursor = ByteCursor(buffer)
            cursor.ipv4(0xFFFF_FFFF)
            count = cursor.count
        }
        #expect(String(decoding: bytes, as: UTF8.self) == "255.255.255.255")
    }
}

/// The fast path's body and the general one come from the same writer, escaping included.
@Suite struct OneAnswerWriterTests {
    @Test func theFastPathBodyEqualsTheGeneralOneEvenWhenAnAddressNeedsEscaping() {
        let host = HostName("www.example.test")!
        for addresses in [["192.0.2.1", "192.0.2.2"], ["2001:db8::1"], ["odd\"\\\u{1}text", "2001:db8::2"]] {
            let answer = ResolvedAnswer(addresses: addresses, ttl: 30, originTTL: 60, source: .cache)
            for short in [false, true] {
                let general = AnswerRendering.response(
                    [HostResult(host: host, families: [(.aaaa, .success(answer))])], batch: false, short: short)
                var name = host.value
                let fast = name.withUTF8 { AnswerRendering.fastSingle(host: $0, family: .aaaa, answer: answer, short: short).body }
                #expect(fast == general.body)
            }
        }
    }
}
