import HTTPDNSCrypto
import Testing

/// Digests and MACs against values computed independently with Python (`hashlib`, `hmac`),
/// pasted with their inputs.
struct DigestTests {
    /// python3: hashlib.sha256(b'abc').hexdigest()
    @Test func sha256MatchesPython() throws {
        #expect(Digest.hex(try Digest.sha256(Array("abc".utf8)))
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(try Digest.sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    /// python3: hashlib.md5(b'www.aliyun.com-mySecretKey-1700000600').hexdigest()
    @Test func md5MatchesPython() throws {
        #expect(try Digest.md5Hex("www.aliyun.com-mySecretKey-1700000600") == "e9933cf8570e725efd5799bab3eba262")
    }

    /// RFC 4231 test case 2, and python3: hmac.new(b'', b'', hashlib.sha256).hexdigest()
    @Test func hmacSHA256MatchesRFC4231AndPython() throws {
        #expect(Digest.hex(try Digest.hmacSHA256(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8)))
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(Digest.hex(try Digest.hmacSHA256(key: [UInt8](), [UInt8]()))
            == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func constantTimeEqualsComparesContentAndLength() {
        #expect(Digest.constantTimeEquals(Array("secret-token".utf8), Array("secret-token".utf8)))
        #expect(!Digest.constantTimeEquals(Array("secret-token".utf8), Array("secret-tokeN".utf8)))
        #expect(!Digest.constantTimeEquals(Array("secret-token".utf8), Array("secret-token-".utf8)))
        #expect(Digest.constantTimeEquals([UInt8](), [UInt8]()))
    }
}
