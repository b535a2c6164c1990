import HTTPDNSCore
import HTTPDNSCrypto
import Testing

@testable import HTTPDNSServer

/// The canonical string written into one buffer (`SignatureV1.withCanonicalBytes`) against the
/// specification spelled out with strings (docs/security.md): every part percent-encoded on its
/// own, the arguments sorted by encoded name, the six lines joined by `\n`.
@Suite struct CanonicalBytesTests {
    /// The canonical string as the specification reads, built the plain way.
    static func specified(method: String, path: String, arguments: [(String, String)], expiry: String, body: [UInt8]) throws -> String {
        let signed = arguments.filter { !["kid", "t", "sign"].contains($0.0) }
            .map { (PercentEncoding.encode($0.0), PercentEncoding.encode($0.1)) }
            .sorted { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
        let query = signed.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        let bodyHash = Digest.hex(try Digest.sha256(body))
        return ["HTTPDNS-HMAC-SHA256", method, PercentEncoding.encode(path, keepingSlash: true), query, expiry, bodyHash]
            .joined(separator: "\n")
    }

    static let cases: [(path: String, arguments: [(String, String)], body: String)] = [
        ("/v1/shop/resolve", [], ""),
        ("/v1/shop/resolve", [("host", "www.example.com,api.example.com"), ("type", "A")], ""),
        ("/v1/a b/ré solve", [("kid", "k"), ("z", ""), ("a:b", "1"), ("a0", "2"), ("A", "é/?&="), ("t", "9"), ("sign", "ab")], ""),
        ("/", [("~x", "~"), ("-x", "-"), (".x", "."), ("_x", "_"), ("%", "%"), ("+", " "), ("b", "1"), ("a", "2"), ("c", "3")], "{}"),
        ("/v1/shop/preload", [("kid", "k"), ("t", "1"), ("sign", "00")], #"{"hosts":["www.example.com"]}"#),
        ("/p", [("n", String(repeating: "é", count: 400)), ("m", String(repeating: "x", count: 300))], ""),
    ]

    @Test(arguments: 0..<6) func theOneBufferWriterGivesTheSpecifiedString(_ index: Int) throws {
        let item = Self.cases[index]
        let body = Array(item.body.utf8)
        let expected = try Self.specified(method: "GET", path: item.path, arguments: item.arguments, expiry: "1767225600", body: body)
        let written = try SignatureV1.canonicalString(
            method: "GET", path: item.path, arguments: item.arguments.map { (name: $0.0, value: $0.1) }, expiry: "1767225600", body: body)
        #expect(written == expected)
        // The same request's arguments read from `QueryArguments`, as the server checks them.
        var query = QueryArguments()
        for (name, value) in item.arguments { query.append(name: name, value: value) }
        let request = HTTPRequest(
            method: "GET", path: item.path, query: query, authorization: nil, body: body, peerAddress: nil, forwardedFor: nil)
        #expect(try SignatureV1.canonicalString(of: request, expiry: "1767225600") == expected)
    }

    /// `verify` accepts the HMAC of the specified string, as hex, and refuses it for another
    /// expiry or with any one digit changed.
    @Test(arguments: 0..<6) func verifyAcceptsTheMACOfTheSpecifiedString(_ index: Int) throws {
        let item = Self.cases[index]
        var query = QueryArguments()
        for (name, value) in item.arguments { query.append(name: name, value: value) }
        let body = Array(item.body.utf8)
        let request = HTTPRequest(
            method: "GET", path: item.path, query: query, authorization: nil, body: body, peerAddress: nil, forwardedFor: nil)
        let secret = Array("canonical-test-secret".utf8)
        let canonical = try Self.specified(method: "GET", path: item.path, arguments: item.arguments, expiry: "77", body: body)
        let sign = Digest.hex(try Digest.hmacSHA256(key: secret, Array(canonical.utf8)))
        let key = try HMACSHA256Key(secret)
        #expect(try SignatureV1.verify(request, .init(keyID: "k", expiry: "77", signature: sign), key: key))
        #expect(try !SignatureV1.verify(request, .init(keyID: "k", expiry: "78", signature: sign), key: key))
        for position in [0, 31, 63] {
            var digits = Array(sign.utf8)
            digits[position] = digits[position] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
            let changed = String(decoding: digits, as: UTF8.self)
            #expect(try !SignatureV1.verify(request, .init(keyID: "k", expiry: "77", signature: changed), key: key))
        }
    }
}
