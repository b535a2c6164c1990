import Foundation
import HTTPDNSCrypto
import Testing

struct Base64URLTests {
    /// Foundation's base64, made URL-safe and unpadded, is the reference for every length that
    /// ends a group differently (0, 1 and 2 bytes left over); decoding gives the bytes back.
    @Test func matchesFoundationsBase64MadeURLSafeForEveryTailLengthAndDecodesBack() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var reference = Data(bytes).base64EncodedString()
            reference = reference.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            while reference.last == "=" { reference.removeLast() }
            #expect(Base64URL.encode(bytes) == reference, "length \(length)")
            #expect(Base64URL.decode(reference) == bytes, "length \(length)")
        }
    }

    /// python3: base64.urlsafe_b64encode(bytes([0xfb,0xff,0xfe,0x01])) == b'-__-AQ=='
    @Test func usesTheURLAlphabetWithoutPadding() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xFE, 0x01]) == "-__-AQ")
        #expect(Base64URL.encode([0, 0, 1]) == "AAAB")
        #expect(Base64URL.encode([]) == "")
        #expect(Base64URL.decode("-__-AQ") == [0xFB, 0xFF, 0xFE, 0x01])
        #expect(Base64URL.decode("") == [])
    }

    @Test(arguments: [
        "-__-AQ==",  // padding
        "+//+AQ",  // the standard alphabet
        "-__- AQ", "-__-AQ\n",  // whitespace
        "A", "AAAAA",  // a length no byte string encodes to
        "AB", "AAB",  // non-zero unused bits: a second spelling of "AA" / "AAA"
        "AA%3D", "AA\u{0}",
    ])
    func decodeRefusesAnythingButCanonicalUnpaddedBase64URL(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}

struct Base64URLIntoBufferTests {
    /// Every byte value in every position of a group: exactly the 64 characters of the URL
    /// alphabet decode, to their place in it (the decoder looks each byte up in a table).
    @Test func everyByteOutsideTheAlphabetIsRefusedInEveryPosition() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for position in 0..<4 {
            for byte in 0...255 {
                var text: [UInt8] = Array("AAAA".utf8)
                text[position] = UInt8(byte)
                var output = [UInt8](repeating: 0, count: Base64URL.decodedCapacity(4))
                let count = text.withUnsafeBytes { text in output.withUnsafeMutableBytes { Base64URL.decode(text, into: $0) } }
                guard let value = alphabet.firstIndex(of: UInt8(byte)) else {
                    #expect(count == nil, "byte \(byte) at \(position)")
                    continue
                }
                let group = UInt32(value) << (6 * (3 - position))
                #expect(
                    count == 3 && output.prefix(3).elementsEqual([UInt8(group >> 16), UInt8(group >> 8 & 0xFF), UInt8(group & 0xFF)]),
                    "byte \(byte) at \(position)")
            }
        }
    }

    /// The decoder into a caller's buffer (the RFC 8484 fast path's) accepts and refuses what
    /// `decode(_:)` does, and writes the same bytes whatever the buffer held.
    @Test(arguments: ["", "AQ", "-__-AQ", "AAAB", "AAAAAA", "-__-AQ==", "+//+AQ", "-__- AQ", "A", "AR", "AAE"])
    func decodesIntoABufferWhatDecodeGives(_ text: String) {
        var characters = Array(text.utf8)
        for fill: UInt8 in [0x00, 0xEE] {
            var output = [UInt8](repeating: fill, count: Base64URL.decodedCapacity(characters.count))
            let count = characters.withUnsafeMutableBytes { text in
                output.withUnsafeMutableBytes { Base64URL.decode(UnsafeRawBufferPointer(text), into: $0) }
            }
            #expect(count.map { Array(output.prefix($0)) } == Base64URL.decode(text), "'\(text)'")
        }
    }
}
