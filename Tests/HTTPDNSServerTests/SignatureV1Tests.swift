import HTTPDNSCore
import HTTPDNSCrypto
import Testing

@testable import HTTPDNSServer

/// The canonical string and signature of scheme v1, and how a request presents its signature.
@Suite struct SignatureV1Tests {
    /// The worked example of docs/security.md. Expected values computed independently:
    ///   python3 -c 'import hmac,hashlib; c="HTTPDNS-HMAC-SHA256\nGET\n/v1/shop/resolve\nhost=www.example.com%2Capi.example.com&type=A\n1767225600\n"+hashlib.sha256(b"").hexdigest(); print(hmac.new(b"example-secret-0123456789",c.encode(),hashlib.sha256).hexdigest())'
    @Test func theDocumentedGetExampleSignsToItsPublishedValue() throws {
        let request = HTTPRequest(
            method: "GET", path: "/v1/shop/resolve",
            query: ["host": "www.example.com,api.example.com", "type": "A", "kid": "app1", "t": "1767225600", "sign": "ignored"])
        let canonical = try SignatureV1.canonicalString(of: request, expiry: "1767225600")
        #expect(
            canonical == """
                HTTPDNS-HMAC-SHA256
                GET
                /v1/shop/resolve
                host=www.example.com%2Capi.example.com&type=A
                1767225600
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """)
        #expect(
            try SignatureV1.signature(secret: "example-secret-0123456789", canonical: canonical)
                == "3f2b9eabe071f60f4f8a149edff7047e03bd9eeb86544846fad1836efd6bb73e")
    }

    /// The POST example of docs/security.md (no query arguments: an empty fourth line):
    ///   python3 -c 'import hmac,hashlib; c="HTTPDNS-HMAC-SHA256\nPOST\n/v1/shop/preload\n\n1767225600\n"+hashlib.sha256(b"{\"hosts\":[\"www.example.com\"]}").hexdigest(); print(hmac.new(b"example-secret-0123456789",c.encode(),hashlib.sha256).hexdigest())'
    @Test func theDocumentedPostExampleSignsToItsPublishedValue() throws {
        let request = HTTPRequest(method: "POST", path: "/v1/shop/preload", body: Array(#"{"hosts":["www.example.com"]}"#.utf8))
        let canonical = try SignatureV1.canonicalString(of: request, expiry: "1767225600")
        #expect(canonical.hasSuffix("\n\n1767225600\n5fa855a28ccc17ca720116fbb96b65114ceabd85c09b07bdc38f6a125e8691f6"))
        #expect(
            try SignatureV1.signature(secret: "example-secret-0123456789", canonical: canonical)
                == "3514b6a75c52c5a57cbf71c5da7bad2b5e849c41ecd64525d23504787a93943b")
    }

    /// `verify` compares the MAC with the hex sent as bytes: the right signature passes, another
    /// or one that is not hex does not.
    @Test func verifyAcceptsOnlyTheRightSignature() throws {
        let request = HTTPRequest(method: "GET", path: "/v1/shop/resolve", query: ["host": "a.test"])
        let secret = "example-secret-0123456789"
        let sign = try SignatureV1.signature(
            secret: secret, canonical: try SignatureV1.canonicalString(of: request, expiry: "1767225600"))
        let key = try HMACSHA256Key(Array(secret.utf8))
        func verify(_ signature: String) throws -> Bool {
            try SignatureV1.verify(request, .init(keyID: "k", expiry: "1767225600", signature: signature), key: key)
        }
        #expect(try verify(sign))
        #expect(try !verify(String(sign.dropLast()) + (sign.hasSuffix("0") ? "1" : "0")))
        #expect(try !verify(String(repeating: "z", count: 64)))
        #expect(try !verify(String(sign.dropLast())))
        #expect(try !SignatureV1.verify(request, .init(keyID: "k", expiry: "1767225601", signature: sign), key: key))
    }

    /// Whole bytes of the right signature are not enough, and more are too many: a prefix of
    /// whole bytes (one byte short, half, none), the signature with a byte added, and one that
    /// differs in its last byte only are all refused.
    @Test func verifyRefusesPrefixesExtensionsAndALastByteChanged() throws {
        let request = HTTPRequest(method: "GET", path: "/v1/shop/resolve", query: ["host": "a.test"])
        let secret = "example-secret-0123456789"
        let sign = try SignatureV1.signature(
            secret: secret, canonical: try SignatureV1.canonicalString(of: request, expiry: "1767225600"))
        let key = try HMACSHA256Key(Array(secret.utf8))
        func verify(_ signature: String) throws -> Bool {
            try SignatureV1.verify(request, .init(keyID: "k", expiry: "1767225600", signature: signature), key: key)
        }
        #expect(try verify(sign))
        for refused in [
            String(sign.dropLast(2)), String(sign.prefix(32)), String(sign.prefix(2)), "",
            sign + "00", sign + sign,
            String(sign.dropLast(2)) + (sign.hasSuffix("ff") ? "fe" : "ff"),
        ] {
            #expect(try !verify(refused), "accepted '\(refused)'")
        }
    }

    /// The expiry read from its digits is the number the general parser reads, up to the 12
    /// digits `presented` accepts.
    @Test(arguments: ["0", "7", "000000000001", "1767225600", "999999999999", "100000000000"])
    func theExpiryIsReadAsItsDecimalDigits(_ text: String) {
        #expect(SignatureV1.Credentials(keyID: "k", expiry: text, signature: "").expirySeconds == Double(text)!)
    }

    @Test func theEmptyBodyHashIsTheSHA256OfNothing() throws {
        #expect(SignatureV1.emptyBodyHash == Digest.hex(try Digest.sha256([UInt8]())))
    }

    /// The canonical string sorts by encoded names without encoding them: the order it finds is
    /// the order of the encoded bytes, where escapes (`%` is 0x25) sort before digits and letters.
    @Test func theOrderOfEncodedNamesIsFoundWithoutEncoding() {
        let names = ["a:", "a0", "a", "", "a b", "a~", "é", "Z", "z", "%", "a%", "a-b", "ab", "~", "a/", "A"]
        for lhs in names {
            for rhs in names {
                let byEncoding = Array(PercentEncoding.encode(lhs).utf8).lexicographicallyPrecedes(Array(PercentEncoding.encode(rhs).utf8))
                #expect(PercentEncoding.encodedPrecedes(lhs, rhs) == byEncoding, "\(lhs) < \(rhs)")
            }
        }
        var bytes: [UInt8] = Array("x".utf8)
        PercentEncoding.append("a b/é", keepingSlash: true, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "xa%20b/%C3%A9")
    }

    @Test func argumentsAreSortedByEncodedNameNotByPair() throws {
        // By "name=value" text, "a-b=1" would come before "a=2" ('-' < '='); by name, "a" first.
        let canonical = try SignatureV1.canonicalString(
            method: "GET", path: "/p", arguments: [("a-b", "1"), ("a", "2"), ("B", "3")], expiry: "1", body: [])
        #expect(canonical.split(separator: "\n", omittingEmptySubsequences: false)[3] == "B=3&a=2&a-b=1")
    }

    @Test func namesValuesAndPathAreReEncodedOneWay() throws {
        #expect(SignatureV1.percentEncoded("AZaz09-._~") == "AZaz09-._~")
        #expect(SignatureV1.percentEncoded("a b+c/d=e&f,g") == "a%20b%2Bc%2Fd%3De%26f%2Cg")
        #expect(SignatureV1.percentEncoded("é") == "%C3%A9")
        #expect(SignatureV1.percentEncoded("/v1/a b/resolve", keepingSlash: true) == "/v1/a%20b/resolve")
        let canonical = try SignatureV1.canonicalString(
            method: "GET", path: "/x y", arguments: [("n m", "v/w"), ("flag", "")], expiry: "9", body: [])
        #expect(canonical.split(separator: "\n", omittingEmptySubsequences: false)[2...3] == ["/x%20y", "flag=&n%20m=v%2Fw"])
    }

    @Test func theSignatureArgumentsAreLeftOut() throws {
        let plain = try SignatureV1.canonicalString(method: "GET", path: "/p", arguments: [("host", "a.test")], expiry: "5", body: [])
        let signed = try SignatureV1.canonicalString(
            method: "GET", path: "/p", arguments: [("kid", "k"), ("host", "a.test"), ("t", "5"), ("sign", "00")], expiry: "5", body: [])
        #expect(plain == signed)
    }

    private let hex64 = String(repeating: "ab", count: 32)

    @Test func credentialsComeFromTheQueryOrTheHeader() {
        let inQuery = HTTPRequest(method: "GET", path: "/", query: ["kid": "k1", "t": "100", "sign": hex64])
        #expect(SignatureV1.presented(in: inQuery) == .credentials(.init(keyID: "k1", expiry: "100", signature: hex64)))
        let inHeader = HTTPRequest(method: "GET", path: "/", authorization: "httpdns-hmac-sha256 kid=k1, t=100 ,sign=\(hex64)")
        #expect(SignatureV1.presented(in: inHeader) == .credentials(.init(keyID: "k1", expiry: "100", signature: hex64)))
        #expect(SignatureV1.presented(in: HTTPRequest(method: "GET", path: "/")) == .none)
        #expect(SignatureV1.presented(in: HTTPRequest(method: "GET", path: "/", authorization: "Bearer x")) == .none)
    }

    @Test(
        arguments: [
            (["kid": "k1", "t": "100"], nil, "sign"),
            (["t": "100", "sign": String(repeating: "ab", count: 32)], nil, "kid"),
            (["kid": "k1", "sign": String(repeating: "ab", count: 32)], nil, "(t)"),
            (["kid": "k1", "t": "-5", "sign": String(repeating: "ab", count: 32)], nil, "digits"),
            (["kid": "k1", "t": "100", "sign": String(repeating: "AB", count: 32)], nil, "hex"),
            (["kid": "k1", "t": "100", "sign": "abc"], nil, "hex"),
            (["kid": "k1"], "HTTPDNS-HMAC-SHA256 kid=k1,t=1,sign=\(String(repeating: "ab", count: 32))", "both"),
            ([:], "HTTPDNS-HMAC-SHA256 kid=k1,t=1,t=2,sign=\(String(repeating: "ab", count: 32))", "twice"),
            ([:], "HTTPDNS-HMAC-SHA256 kid=k1,t=1,nonce=2,sign=\(String(repeating: "ab", count: 32))", "unknown"),
            ([:], "HTTPDNS-HMAC-SHA256", "kid"),
        ] as [([String: String], String?, String)])
    func incompleteOrMalformedCredentialsAreMalformed(query: [String: String], authorization: String?, says: String) {
        let request = HTTPRequest(method: "GET", path: "/", query: query, authorization: authorization)
        guard case .malformed(let reason) = SignatureV1.presented(in: request) else {
            Issue.record("not malformed: \(SignatureV1.presented(in: request))")
            return
        }
        #expect(reason.contains(says), "\(reason)")
    }

    @Test func aRepeatedArgumentMakesASignedRequestMalformed() {
        var query = QueryArguments()
        for (name, value) in [("kid", "k1"), ("t", "100"), ("sign", hex64), ("host", "a.test"), ("host", "b.test")] {
            query.append(name: name, value: value)
        }
        #expect(query.hasRepeatedNames)
        #expect(query["host"] == "a.test")
        let request = HTTPRequest(method: "GET", path: "/", query: query, authorization: nil, body: [], peerAddress: nil, forwardedFor: nil)
        #expect(SignatureV1.presented(in: request) == .malformed("a query argument is given more than once"))
    }
}
