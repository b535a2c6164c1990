import HTTPDNSCore
import Testing

@testable import HTTPDNSCrypto
@testable import HTTPDNSServer

/// The worked example of docs/encryption.md, made with Python's `cryptography` package:
///
///     from cryptography.hazmat.primitives.ciphers.aead import AESGCM
///     b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
///     key = bytes.fromhex("000102...1e1f"); nonce = bytes.fromhex("101112131415161718191a1b")
///     b64(nonce + AESGCM(key).encrypt(nonce, b"host=www.example.com&type=A",
///                                     b"httpdns-enc-v1 query GET /v1/shop/resolve"))
///     anonce = bytes.fromhex("202122232425262728292a2b")
///     (anonce + AESGCM(key).encrypt(anonce, answer,
///         b"httpdns-enc-v1 answer GET /v1/shop/resolve EBESExQVFhcYGRob")).hex()
struct EncryptionWorkedExampleTests {
    static let key = AccountConfig.aesKeyBytes(hex: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")!
    static let enc = "EBESExQVFhcYGRobFZHrYnS-TcTkEHB8YgkFNvkzIWM9ti7BgsSjPuspTgYqbEfOBkcCiC0Wfg"
    static let answer =
        #"{"host":"www.example.com","ips":["192.0.2.1"],"ipsv6":[],"ttl":60,"origin_ttl":60,"source":"cache","stale":false}"#
    static let sealedAnswer = """
        202122232425262728292a2ba918ce1f1fec3834380b35b9ef7d8c98bd3980f9a9e30c834eda4e7b39f97c332e\
        acd43dbc0b05f426d35fb005253da192599ab8b806763ce2400b69209030ebe80aef64e4fe82ffe5359d53d77f\
        0357e5bb1177d88ef47daa6df808797dfdb467760274bb30ff9facbe9e61c29abe760d6aeaafcd4d9d193e1bb1\
        c0943c175bf0
        """

    @Test func theExamplesEncOpensToItsQuery() throws {
        let request = HTTPRequest(method: "GET", path: "/v1/shop/resolve", query: ["enc": Self.enc])
        guard case .opened(let opened, let exchange) = RequestOpening.open(request, account: "shop", key: Self.key, requireEncryption: true)
        else {
            Issue.record("the example's enc did not open")
            return
        }
        #expect(opened.query["host"] == "www.example.com")
        #expect(opened.query["type"] == "A")
        #expect(opened.query.pairs.count == 2)
        #expect(Digest.hex(exchange.requestNonce) == "101112131415161718191a1b")
        #expect(
            String(
                decoding: EncryptedExchange.associatedData(
                    .answer, method: "GET", path: "/v1/shop/resolve",
                    requestNonce: exchange.requestNonce), as: UTF8.self)
                == "httpdns-enc-v1 answer GET /v1/shop/resolve EBESExQVFhcYGRob")
    }

    @Test func theExamplesAnswerIsWhatTheServerSealsWithThatNonce() throws {
        let associatedData = Array("httpdns-enc-v1 answer GET /v1/shop/resolve EBESExQVFhcYGRob".utf8)
        let nonce = HexDigits.bytes("202122232425262728292a2b")!
        let sealed = try AESGCM.seal(Array(Self.answer.utf8), key: Self.key, nonce: nonce, associatedData: associatedData)
        #expect(Digest.hex(sealed) == Self.sealedAnswer)
        #expect(
            try AESGCM.open(HexDigits.bytes(Self.sealedAnswer)!, key: Self.key, associatedData: associatedData) == Array(Self.answer.utf8))
    }
}
