import HTTPDNSCrypto
import Testing

/// `HMACSHA256Key` (SHA-256 states prepared from the key) against RFC 4231's HMAC-SHA-256 test
/// vectors and against OpenSSL's one-shot `HMAC` (`Digest.hmacSHA256`).
struct HMACSHA256KeyTests {
    /// RFC 4231 test cases 1, 2, 3, 4, 6 and 7 (5 is a truncated MAC): keys shorter than a block,
    /// and of 131 bytes (hashed first); messages shorter and longer than a block.
    static let rfc4231: [(key: [UInt8], message: [UInt8], mac: String)] = [
        (
            [UInt8](repeating: 0x0B, count: 20), Array("Hi There".utf8),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        (
            Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        (
            [UInt8](repeating: 0xAA, count: 20), [UInt8](repeating: 0xDD, count: 50),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        ),
        (
            Array(1...25), [UInt8](repeating: 0xCD, count: 50),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        ),
        (
            [UInt8](repeating: 0xAA, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
        (
            [UInt8](repeating: 0xAA, count: 131),
            Array(
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
                    .utf8),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        ),
    ]

    @Test(arguments: 0..<6) func aPreparedKeyGivesRFC4231sMAC(_ index: Int) throws {
        let vector = Self.rfc4231[index]
        let key = try HMACSHA256Key(vector.key)
        #expect(Digest.hex(try key.authenticationCode(vector.message)) == vector.mac)
        #expect(Digest.hex(try Digest.hmacSHA256(key: vector.key, vector.message)) == vector.mac)
        var output = [UInt8](repeating: 0, count: HMACSHA256Key.size)
        try vector.message.withUnsafeBytes { message in
            try output.withUnsafeMutableBytes { try key.authenticationCode(message, into: $0) }
        }
        #expect(Digest.hex(output) == vector.mac)
    }

    /// Keys of every length around the block size (64 bytes: kept, padded or hashed) and messages
    /// of every length around one and two blocks give what the one-shot HMAC gives, and the same
    /// key used again gives the same MAC (the prepared states are only read).
    @Test func everyKeyAndMessageLengthAroundABlockMatchesTheOneShot() throws {
        for keyLength in [0, 1, 55, 63, 64, 65, 128] {
            let secret = (0..<keyLength).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
            let key = try HMACSHA256Key(secret)
            for messageLength in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 300] {
                let message = (0..<messageLength).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
                let expected = try Digest.hmacSHA256(key: secret, message)
                #expect(try key.authenticationCode(message) == expected, "key \(keyLength) message \(messageLength)")
                #expect(try key.authenticationCode(message) == expected)
            }
        }
    }
}
