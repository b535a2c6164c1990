import Testing

@testable import HTTPDNSCrypto

/// AES-256-GCM sealing and opening, against vectors computed independently with Python's
/// `cryptography` package (pasted below with the snippet that made them).
struct AESGCMTests {
    static let key = [UInt8](0..<32)
    static let nonce = [UInt8](0..<12)
    static let plaintext = Array("host=www.example.com&type=1".utf8)
    static let associatedData = Array("httpdns-enc-v1 query GET /v1/acct/resolve".utf8)

    /// python3 (cryptography 48):
    ///     from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    ///     key = bytes(range(32)); nonce = bytes(range(12))
    ///     (nonce + AESGCM(key).encrypt(nonce, b"host=www.example.com&type=1",
    ///         b"httpdns-enc-v1 query GET /v1/acct/resolve")).hex()
    ///     (nonce + AESGCM(key).encrypt(nonce, b"", None)).hex()
    static let knownSealed =
        "000102030405060708090a0b2f6da56ff892b56ca324efeadc991408adb5e859d60f260c5d5ad4cabd239293f695a63295303f0fca8591"
    static let knownSealedEmpty = "000102030405060708090a0bf4c2db1dc38805a37b92171c5d0a81cc"

    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    @Test func sealWithAGivenNonceMatchesPythonCryptography() throws {
        let sealed = try AESGCM.seal(Self.plaintext, key: Self.key, nonce: Self.nonce, associatedData: Self.associatedData)
        #expect(Digest.hex(sealed) == Self.knownSealed)
        #expect(Digest.hex(try AESGCM.seal([], key: Self.key, nonce: Self.nonce, associatedData: [])) == Self.knownSealedEmpty)
    }

    @Test func openAcceptsPythonCryptographysOutput() throws {
        #expect(try AESGCM.open(Self.bytes(hex: Self.knownSealed), key: Self.key, associatedData: Self.associatedData) == Self.plaintext)
        #expect(try AESGCM.open(Self.bytes(hex: Self.knownSealedEmpty), key: Self.key).isEmpty)
    }

    @Test(arguments: [0, 1, 27, 1000])
    func roundTripsWithARandomNonceLaidOutAsNonceCiphertextTag(length: Int) throws {
        let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let sealed = try AESGCM.seal(plaintext, key: Self.key, associatedData: Self.associatedData)
        #expect(sealed.count == AESGCM.nonceCount + length + AESGCM.tagCount)
        #expect(try AESGCM.open(sealed, key: Self.key, associatedData: Self.associatedData) == plaintext)
    }

    @Test func everyMessageGetsAFreshNonce() throws {
        let first = try AESGCM.seal(Self.plaintext, key: Self.key)
        let second = try AESGCM.seal(Self.plaintext, key: Self.key)
        #expect(first.prefix(AESGCM.nonceCount) != second.prefix(AESGCM.nonceCount))
        #expect(first != second)
    }

    /// Every byte position (nonce, ciphertext, tag), one bit flipped: no plaintext comes out.
    @Test func flippingAnyByteOfNonceCiphertextOrTagFailsToOpen() throws {
        let sealed = Self.bytes(hex: Self.knownSealed)
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(throws: CryptoError.self, "byte \(index)") {
                try AESGCM.open(tampered, key: Self.key, associatedData: Self.associatedData)
            }
        }
    }

    @Test func wrongKeyOtherAssociatedDataOrTruncationFailToOpen() throws {
        let sealed = Self.bytes(hex: Self.knownSealed)
        var otherKey = Self.key
        otherKey[31] ^= 0x80
        #expect(throws: CryptoError.self) { try AESGCM.open(sealed, key: otherKey, associatedData: Self.associatedData) }
        #expect(throws: CryptoError.self) {
            try AESGCM.open(sealed, key: Self.key, associatedData: Array("httpdns-enc-v1 query GET /v1/other/resolve".utf8))
        }
        #expect(throws: CryptoError.self) { try AESGCM.open(Array(sealed.dropLast()), key: Self.key, associatedData: Self.associatedData) }
        #expect(throws: CryptoError.self) { try AESGCM.open(Array(sealed.prefix(27)), key: Self.key) }
        #expect(throws: CryptoError.self) { try AESGCM.open(sealed + [0], key: Self.key, associatedData: Self.associatedData) }
    }

    @Test func keysOtherThan32BytesAreRefused() {
        #expect(throws: CryptoError.self) { try AESGCM.seal(Self.plaintext, key: Array(Self.key.prefix(16))) }
        #expect(throws: CryptoError.self) { try AESGCM.open(Self.bytes(hex: Self.knownSealed), key: Self.key + [0]) }
    }
}
