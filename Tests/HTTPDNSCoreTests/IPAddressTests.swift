import HTTPDNSCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct IPAddressTests {
    @Test func ipv4ParsesToFourBytesInNetworkOrder() throws {
        let address = try #require(IPAddress("192.0.2.1"))
        #expect(address.family == .a)
        #expect(address.bytes == [192, 0, 2, 1])
        #expect(address.description == "192.0.2.1")
    }

    @Test func ipv6ParsesToSixteenBytes() throws {
        let address = try #require(IPAddress("::1"))
        #expect(address.family == .aaaa)
        #expect(address.bytes == Array(repeating: 0, count: 15) + [1])
    }

    @Test func ipv6IsPrintedInCanonicalForm() {
        #expect(IPAddress("2001:0DB8:0000:0000:0000:0000:0000:0010")?.description == "2001:db8::10")
        #expect(IPAddress("::ffff:192.0.2.1")?.description == "::ffff:192.0.2.1")
    }

    @Test(arguments: ["", "256.0.0.1", "1.2.3", "1.2.3.4.5", "example.com", "1.2.3.4 ", ":::1", "2001:db8::g", "[::1]", "1.2.3.-4"])
    func invalidTextIsRejected(_ text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func bytesMustMatchTheFamily() {
        #expect(IPAddress(family: .a, bytes: [10, 0, 0, 1])?.description == "10.0.0.1")
        #expect(IPAddress(family: .a, bytes: [10, 0, 0]) == nil)
        #expect(IPAddress(family: .aaaa, bytes: [10, 0, 0, 1]) == nil)
        #expect(IPAddress(family: .aaaa, bytes: [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 12))?.description == "2001:db8::")
    }

    /// IPv4 text is written digit by digit: every byte value in every position reads as
    /// `inet_ntop` writes it (and parses back to the same bytes).
    @Test func ipv4TextIsInetNtopsForEveryByteInEveryPosition() throws {
        for position in 0..<4 {
            for value in 0...255 {
                var bytes: [UInt8] = [192, 0, 2, 1]
                bytes[position] = UInt8(value)
                let address = try #require(IPAddress(family: .a, bytes: bytes))
                var reference = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                _ = bytes.withUnsafeBytes { inet_ntop(AF_INET, $0.baseAddress, &reference, socklen_t(reference.count)) }
                let text = String(decoding: reference.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                #expect(address.description == text, "\(bytes)")
                #expect(IPAddress(address.description)?.bytes == bytes)
            }
        }
        #expect(IPAddress(family: .a, bytes: [255, 255, 255, 255])?.description == "255.255.255.255")
        #expect(IPAddress(family: .a, bytes: [0, 0, 0, 0])?.description == "0.0.0.0")
    }

    /// The bytes kept inline read the same through every accessor, and an address made from text
    /// equals (and hashes like) the one made from its bytes; families never compare equal.
    @Test func bytesReadAlikeThroughEveryAccessorAndEqualityIgnoresHowAnAddressWasMade() throws {
        for text in ["192.0.2.1", "2001:db8::10", "::ffff:192.0.2.1"] {
            let address = try #require(IPAddress(text))
            let bytes = address.bytes
            #expect(bytes.count == address.count)
            #expect((0..<address.count).map(address.byte) == bytes)
            #expect(address.withUnsafeBytes { Array($0) } == bytes)
            let fromBytes = try #require(IPAddress(family: address.family, bytes: bytes))
            let fromRaw = try #require(bytes.withUnsafeBytes { IPAddress(family: address.family, rawBytes: $0) })
            #expect(fromBytes == address && fromRaw == address)
            #expect(Set([address, fromBytes, fromRaw]).count == 1)
        }
        #expect(IPAddress("::") != IPAddress("0.0.0.0"))
        #expect([UInt8](repeating: 0, count: 4).withUnsafeBytes { IPAddress(family: .aaaa, rawBytes: $0) } == nil)
        #expect(IPAddress("::ffff:192.0.2.1")?.mappedIPv4 == IPAddress("192.0.2.1"))
    }
}
