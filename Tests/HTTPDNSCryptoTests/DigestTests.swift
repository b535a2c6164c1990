import HTTPDNSCrypto
import Testing

/// Digests and MACs against values computed independently with Python (`hashlib`, `hmac`),
/// pasted with their inputs.
struct DigestTests {
    /// python3: hashlib.sha256(b'abc').hexdigest()
    @Test func sha256MatchesPython() throws {
        #expect(
            Digest.hex(try Digest.sha256(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(try Digest.sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    /// python3: hashlib.md5(b'www.aliyun.com-mySecretKey-1700000600').hexdigest()
    @Test func md5MatchesPython() throws {
        #expect(try Digest.md5Hex("www.aliyun.com-mySecretKey-1700000600") == "e9933cf8570e725efd5799bab3eba262")
    }

    /// Inputs of many blocks and of none. python3: hashlib.sha256(b'a' * 1000000).hexdigest(),
    /// hashlib.md5(b'').hexdigest(), hashlib.md5(b'x' * 200).hexdigest()
    @Test func digestsOfLongAndEmptyInputsMatchPython() throws {
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(Digest.hex(try Digest.sha256(million)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(Digest.hex(try Digest.md5([UInt8]())) == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(Digest.hex(try Digest.md5([UInt8](repeating: UInt8(ascii: "x"), count: 200))) == "30a83621ce5422fbdfdd539777458c78")
    }

    /// RFC 4231 test case 2, and python3: hmac.new(b'', b'', hashlib.sha256).hexdigest()
    @Test func hmacSHA256MatchesRFC4231AndPython() throws {
        #expect(
            Digest.hex(try Digest.hmacSHA256(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            Digest.hex(try Digest.hmacSHA256(key: [UInt8](), [UInt8]()))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    /// A prepared key gives what the one-shot HMAC gives (RFC 4231 test case 2), for any number of
    /// messages, from several threads at once.
    @Test func aPreparedHMACKeyMatchesTheOneShotFromManyThreads() async throws {
        let key = try HMACSHA256Key(Array("Jefe".utf8))
        #expect(
            Digest.hex(try key.authenticationCode(Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let secret = Array("client-secret-0123456789".utf8)
        let prepared = try HMACSHA256Key(secret)
        let messages = (0..<64).map { Array("GET\n/v1/a/resolve\nhost=h\($0).test".utf8) }
        let expected = try messages.map { try Digest.hmacSHA256(key: secret, $0) }
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 {
                group.addTask { try messages.indices.allSatisfy { try prepared.authenticationCode(messages[$0]) == expected[$0] } }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == [true, true, true, true])
        #expect(try prepared.authenticationCode([]) == Digest.hmacSHA256(key: secret, [UInt8]()))
    }

    @Test func constantTimeEqualsComparesContentAndLength() {
        #expect(Digest.constantTimeEquals(Array("secret-token".utf8), Array("secret-token".utf8)))
        #expect(!Digest.constantTimeEquals(Array("secret-token".utf8), Array("secret-tokeN".utf8)))
        #expect(!Digest.constantTimeEquals(Array("secret-token".utf8), Array("secret-token-".utf8)))
        #expect(Digest.constantTimeEquals([UInt8](), [UInt8]()))
    }
}
