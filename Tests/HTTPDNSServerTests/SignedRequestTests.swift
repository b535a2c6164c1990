import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSServer

/// The one signature check reads a borrowed request head (`RequestHead`, as the fast path has it)
/// exactly as it reads the general path's copy of the same request (`HTTPRequest`).
@Suite struct SignedRequestTests {
    static let hex64 = String(repeating: "ab", count: 32)
    static let secret = "signed-request-secret-0123456789"

    /// Requests that present a signature in every way the reader tells apart.
    static let heads: [(label: String, arguments: [(String, String?)], authorization: String?)] = [
        ("unsigned", [("host", "a.test")], nil),
        ("query", [("host", "a.test"), ("kid", "k1"), ("t", "100"), ("sign", hex64)], nil),
        ("header", [("host", "a.test")], "HTTPDNS-HMAC-SHA256 kid=k1,t=100,sign=\(hex64)"),
        ("header, spaces and case", [], "httpdns-hmac-sha256 KID=k1 ,\tt=100 ,, Sign=\(hex64)"),
        ("another scheme", [("host", "a.test")], "Bearer x"),
        ("scheme alone", [], "HTTPDNS-HMAC-SHA256"),
        ("scheme and a space", [], "HTTPDNS-HMAC-SHA256 "),
        ("both", [("kid", "k1")], "HTTPDNS-HMAC-SHA256 kid=k1,t=1,sign=\(hex64)"),
        ("field twice", [], "HTTPDNS-HMAC-SHA256 kid=k1,t=1,t=2,sign=\(hex64)"),
        ("unknown field", [], "HTTPDNS-HMAC-SHA256 kid=k1,nonce=2,t=1,sign=\(hex64)"),
        ("not name=value", [], "HTTPDNS-HMAC-SHA256 kid=k1, t ,sign=\(hex64)"),
        ("no sign", [("kid", "k1"), ("t", "100")], nil),
        ("t not digits", [("kid", "k1"), ("t", "-5"), ("sign", hex64)], nil),
        ("t too long", [("kid", "k1"), ("t", "1234567890123"), ("sign", hex64)], nil),
        ("sign upper case", [("kid", "k1"), ("t", "100"), ("sign", hex64.uppercased())], nil),
        ("name without =", [("host", nil), ("kid", "k1"), ("t", "100"), ("sign", hex64)], nil),
        ("repeated argument", [("host", "a.test"), ("kid", "k1"), ("t", "100"), ("sign", hex64), ("host", "b.test")], nil),
        ("repeated kid", [("kid", "k1"), ("kid", "k2"), ("t", "100"), ("sign", hex64)], nil),
    ]

    @Test(arguments: 0..<heads.count) func theHeadPresentsWhatItsRequestPresents(_ index: Int) {
        let item = Self.heads[index]
        let head = MemoryHead("GET", "/v1/default/resolve", item.arguments, authorization: item.authorization)
        #expect(SignatureV1.presented(in: head) == SignatureV1.presented(in: head.request()), "\(item.label)")
    }

    /// `t` is decimal digits and `sign` lower-case hex digits: the bytes just outside each
    /// range (`/` `:` `` ` `` `g` `@` `G` `F`) are refused wherever they stand.
    @Test(arguments: ["/", ":", "`", "g", "@", "G", "F", "é"])
    func aByteOutsideTheDigitsIsMalformed(_ character: String) {
        for position in [0, 31, 63] {
            var digits = Array(Self.hex64)
            digits[position] = Character(character)
            let request = HTTPRequest(method: "GET", path: "/", query: ["kid": "k1", "t": "100", "sign": String(digits)])
            #expect(SignatureV1.presented(in: request) == .malformed("the signature (sign) must be 64 lower-case hex digits"))
        }
        for t in ["\(character)100", "1\(character)0", "10\(character)", "a0"] {
            let request = HTTPRequest(method: "GET", path: "/", query: ["kid": "k1", "t": t, "sign": Self.hex64])
            #expect(SignatureV1.presented(in: request) == .malformed("the expiry (t) must be Unix seconds, digits only"), "\(t)")
        }
        let edgeDigits = "09af" + Self.hex64.dropFirst(4)
        let edges = HTTPRequest(method: "GET", path: "/", query: ["kid": "k1", "t": "0189", "sign": edgeDigits])
        #expect(SignatureV1.presented(in: edges) == .credentials(.init(keyID: "k1", expiry: "0189", signature: edgeDigits)))
    }

    @Test func theHeadsPartsAreTheRequestsParts() {
        let head = MemoryHead(
            "GET", "/v1/a b/resolve", [("host", "a.test"), ("flag", nil), ("host", "b.test"), ("é", "ü")], authorization: "x y")
        func described(_ parts: SignedParts) -> [String] {
            func text(_ bytes: UnsafeRawBufferPointer?) -> String { bytes.map { String(decoding: $0, as: UTF8.self) } ?? "nil" }
            return [text(parts.method), text(parts.path), text(parts.authorization), "\(parts.hasRepeatedNames)", "\(parts.body.count)"]
                + parts.arguments.map { "\(text($0.name))=\(text($0.value))" }
        }
        let fromHead = head.withSignedParts(described)
        #expect(fromHead == head.request().withSignedParts(described))
        #expect(fromHead == ["GET", "/v1/a b/resolve", "x y", "true", "0", "host=a.test", "flag=", "é=ü"])
    }

    /// Names compare in any case as text, as they did when the header was read as a `String`: the
    /// Kelvin sign (U+212A) lower-cases to `k`.
    @Test func aFieldNameIsComparedInUnicodesLowerCase() {
        let request = HTTPRequest(method: "GET", path: "/", authorization: "HTTPDNS-HMAC-SHA256 \u{212A}id=k1,t=100,sign=\(Self.hex64)")
        #expect(SignatureV1.presented(in: request) == .credentials(.init(keyID: "k1", expiry: "100", signature: Self.hex64)))
        let unknown = HTTPRequest(method: "GET", path: "/", authorization: "HTTPDNS-HMAC-SHA256 KÏD=k1")
        #expect(SignatureV1.presented(in: unknown) == .malformed("unknown Authorization field 'kïd'"))
    }

    /// A combining mark after the scheme's space makes that space another character: the header
    /// is not of this scheme.
    @Test func aSchemeWhoseSpaceCarriesACombiningMarkIsAnotherScheme() {
        let request = HTTPRequest(method: "GET", path: "/", authorization: "HTTPDNS-HMAC-SHA256 \u{301}kid=k1,t=100,sign=\(Self.hex64)")
        #expect(SignatureV1.presented(in: request) == .none)
        let accented = HTTPRequest(method: "GET", path: "/", authorization: "HTTPDNS-HMAC-SHA256 é=1")
        #expect(SignatureV1.presented(in: accented) == .malformed("unknown Authorization field 'é'"))
    }

    /// `authenticate` gives the same outcome, refusal text included, on a head and on its request.
    @Test func theHeadIsAuthenticatedAsItsRequestIs() throws {
        let clock = ManualClock(start: 1_767_225_000)
        let authenticator = ClientAuthenticator(clock: clock)
        var config = AccountConfig()
        config.clientKeys = [ClientKey(id: "k1", secret: Self.secret, role: .resolve)]
        config.requireSignedRequests = true
        let t = "1767225060"
        let canonical = try SignatureV1.canonicalString(
            method: "GET", path: "/v1/default/resolve", arguments: [("host", "a.test")], expiry: t, body: [])
        let sign = try SignatureV1.signature(secret: Self.secret, canonical: canonical)
        let heads = [
            MemoryHead("GET", "/v1/default/resolve", [("host", "a.test"), ("kid", "k1"), ("t", t), ("sign", sign)]),
            MemoryHead("GET", "/v1/default/resolve", [("host", "a.test")], authorization: "HTTPDNS-HMAC-SHA256 kid=k1,t=\(t),sign=\(sign)"),
            MemoryHead("GET", "/v1/default/resolve", [("host", "b.test"), ("kid", "k1"), ("t", t), ("sign", sign)]),
            MemoryHead("GET", "/v1/default/resolve", [("host", "a.test"), ("kid", "k2"), ("t", t), ("sign", sign)]),
            MemoryHead("GET", "/v1/default/resolve", [("host", "a.test"), ("kid", "k1"), ("t", "1767224000"), ("sign", sign)]),
            MemoryHead("GET", "/v1/default/resolve", [("host", "a.test")]),
        ]
        func outcome(_ result: Result<Authentication, APIError>) -> String {
            switch result {
            case .success(let authentication): "\(authentication)"
            case .failure(let error): error.message
            }
        }
        let outcomes = heads.map { outcome(authenticator.authenticate($0, config: config)) }
        #expect(outcomes == heads.map { outcome(authenticator.authenticate($0.request(), config: config)) })
        #expect(outcomes[0] == "\(Authentication.key(id: "k1", role: .resolve))")
        #expect(outcomes[1] == outcomes[0])
        #expect(outcomes[2].hasPrefix("bad signature"))
        #expect(outcomes[3].hasPrefix("bad signature"))
        #expect(outcomes[4].hasPrefix("signature expired: t=1767224000"))
        #expect(outcomes[5].hasPrefix("missing signature"))
    }
}
