import HTTPDNSCore
import HTTPDNSCrypto
import Synchronization
import Testing

@testable import HTTPDNSServer

/// Opening encrypted requests and sealing their answers (docs/encryption.md), without sockets.
/// The client side here uses the same `AESGCM`; the integration tests use an independent client.
struct RequestEncryptionTests {
    static let key = [UInt8](repeating: 0x42, count: 32)
    static let path = "/v1/shop/resolve"

    /// What a client sends: `enc` sealing `query` for `method path`, plus `extra` arguments, and
    /// `body` sealed when given. Returns the request and its nonce.
    static func encrypted(
        _ query: String, method: String = "GET", path: String = path, key: [UInt8] = key, body: [UInt8]? = nil,
        extra: [String: String] = [:]
    ) throws -> (HTTPRequest, [UInt8]) {
        let sealed = try AESGCM.seal(
            Array(query.utf8), key: key,
            associatedData: EncryptedExchange.associatedData(.query, method: method, path: path, requestNonce: nil))
        let nonce = Array(sealed.prefix(12))
        let sealedBody = try body.map {
            try AESGCM.seal(
                $0, key: key, associatedData: EncryptedExchange.associatedData(.body, method: method, path: path, requestNonce: nonce))
        }
        var arguments = extra
        arguments["enc"] = Base64URL.encode(sealed)
        return (HTTPRequest(method: method, path: path, query: arguments, body: sealedBody ?? []), nonce)
    }

    /// `request` with `name` given a second time (libmicrohttpd keeps the first, and says so).
    static func withRepeated(_ name: String, _ request: HTTPRequest) -> HTTPRequest {
        var query = QueryArguments()
        for pair in request.query.pairs { query.append(name: pair.name, value: pair.value) }
        query.append(name: "kid", value: "k1")
        query.append(name: name, value: "again")
        var repeated = request
        repeated.query = query
        return repeated
    }

    static func open(_ request: HTTPRequest, key: [UInt8]? = key, requireEncryption: Bool = false) -> RequestOpening.Outcome {
        RequestOpening.open(request, account: "shop", key: key, requireEncryption: requireEncryption)
    }

    @Test func anEncryptedQueryStringBecomesTheRequestsArguments() throws {
        let (request, nonce) = try Self.encrypted("host=www.example.test&type=AAAA&short=1&client_ip=192.0.2.1")
        guard case .opened(let opened, let exchange) = Self.open(request) else {
            Issue.record("not opened")
            return
        }
        #expect(opened.query["host"] == "www.example.test")
        #expect(opened.query["type"] == "AAAA")
        #expect(opened.query["short"] == "1")
        #expect(opened.query["client_ip"] == "192.0.2.1")
        #expect(opened.query["enc"] == nil)
        #expect(opened.query.pairs.count == 4)
        #expect(opened.method == "GET" && opened.path == Self.path)
        #expect(exchange.requestNonce == nonce)
    }

    @Test func escapesArePercentDecodedAndPlusIsASpaceAsInAURL() throws {
        let (request, _) = try Self.encrypted("host=a%2Eexample.test&note=x+y%20z&flag")
        guard case .opened(let opened, _) = Self.open(request) else {
            Issue.record("not opened")
            return
        }
        #expect(opened.query["host"] == "a.example.test")
        #expect(opened.query["note"] == "x y z")
        #expect(opened.query["flag"] == "")
    }

    @Test func theSignatureArgumentsMayStandBesideEnc() throws {
        let (request, _) = try Self.encrypted("host=a.example.test", extra: ["kid": "k1", "t": "1700000000", "sign": "00"])
        guard case .opened(let opened, _) = Self.open(request) else {
            Issue.record("not opened")
            return
        }
        #expect(opened.query["kid"] == nil)
        #expect(opened.query["host"] == "a.example.test")
    }

    @Test func aPlainRequestPassesUnlessTheAccountRequiresEncryption() {
        let request = HTTPRequest(method: "GET", path: Self.path, query: ["host": "a.example.test"])
        guard case .plain = Self.open(request) else {
            Issue.record("a plain request was not let through")
            return
        }
        guard case .plain = Self.open(request, key: nil) else {
            Issue.record("a plain request to an account without key was not let through")
            return
        }
        guard case .refused(let error) = Self.open(request, requireEncryption: true) else {
            Issue.record("a plain request was not refused")
            return
        }
        #expect(error.code == .forbidden)
        #expect(error.message.contains("requires encrypted requests"))
    }

    /// Every byte of the sealed query changed in turn: 401 each time, never opened.
    @Test func aTamperedEncIs401() throws {
        let (request, _) = try Self.encrypted("host=a.example.test")
        let sealed = try #require(Base64URL.decode(request.query["enc"]!))
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 0x20
            let outcome = Self.open(HTTPRequest(method: "GET", path: Self.path, query: ["enc": Base64URL.encode(tampered)]))
            guard case .refused(let error) = outcome else {
                Issue.record("byte \(index): not refused")
                continue
            }
            #expect(error.code == .unauthorized, "byte \(index)")
        }
    }

    @Test func encSealedForAnotherKeyPathOrMethodIs401() throws {
        var otherKey = Self.key
        otherKey[0] ^= 1
        let cases = [
            try Self.encrypted("host=a.example.test", key: otherKey).0,
            try Self.encrypted("host=a.example.test", path: "/v1/other/resolve").0,
            try Self.encrypted("host=a.example.test", method: "DELETE").0,
        ]
        for (index, sealed) in cases.enumerated() {
            let request = HTTPRequest(method: "GET", path: Self.path, query: ["enc": sealed.query["enc"]!])
            guard case .refused(let error) = Self.open(request) else {
                Issue.record("case \(index): not refused")
                continue
            }
            #expect(error.code == .unauthorized, "case \(index)")
        }
    }

    @Test func malformedEncOrEncBesideOtherArgumentsOrWithoutAKeyIs400() throws {
        let (valid, _) = try Self.encrypted("host=a.example.test")
        let enc = valid.query["enc"]!
        let requests: [(HTTPRequest, [UInt8]?)] = [
            (HTTPRequest(method: "GET", path: Self.path, query: ["enc": enc + "="]), Self.key),
            (
                HTTPRequest(
                    method: "GET", path: Self.path,
                    query: [
                        "enc": enc.replacingOccurrences(of: "-", with: "+")
                            .replacingOccurrences(of: "_", with: "/") + "+"
                    ]), Self.key
            ),
            (HTTPRequest(method: "GET", path: Self.path, query: ["enc": String(enc.prefix(36))]), Self.key),
            (HTTPRequest(method: "GET", path: Self.path, query: ["enc": ""]), Self.key),
            (HTTPRequest(method: "GET", path: Self.path, query: ["enc": enc, "host": "b.example.test"]), Self.key),
            (valid, nil),
            (Self.withRepeated("enc", valid), Self.key),
            (Self.withRepeated("kid", valid), Self.key),
        ]
        for (index, (request, key)) in requests.enumerated() {
            guard case .refused(let error) = Self.open(request, key: key) else {
                Issue.record("case \(index): not refused")
                continue
            }
            #expect(error.code == .invalidParameter, "case \(index): \(error.message)")
        }
    }

    @Test(arguments: [
        "host=a%00b.example.test", "host=a%0Ab", "host=a\u{1}b", "host=a%7Fb", "host=%FF%FE", "host=%4", "host=%zz",
        "host=a&host=b", "=x", "host=a&enc=x", "host=a&sign=00", "host=a&kid=k1", "host=a&t=1",
    ])
    func aDecryptedQueryThatAURLCouldNotCarryCleanlyIsASealed400(query: String) throws {
        let (request, _) = try Self.encrypted(query)
        guard case .refusedSealed(let error, _) = Self.open(request) else {
            Issue.record("not refused sealed")
            return
        }
        #expect(error.code == .invalidParameter)
    }

    @Test func aSealedBodyIsOpenedAndBoundToTheQuerysNonce() throws {
        let json = Array(#"{"hosts":["a.example.test"]}"#.utf8)
        let (request, _) = try Self.encrypted("", method: "POST", path: "/v1/shop/preload", body: json)
        guard case .opened(let opened, _) = Self.open(request) else {
            Issue.record("not opened")
            return
        }
        #expect(opened.body == json)
        #expect(opened.query.isEmpty)

        // The same sealed body beside another request's enc (another nonce) does not open.
        let (other, _) = try Self.encrypted("", method: "POST", path: "/v1/shop/preload", body: json)
        var swapped = other
        swapped.body = request.body
        guard case .refused(let error) = Self.open(swapped) else {
            Issue.record("a body moved to another request was opened")
            return
        }
        #expect(error.code == .unauthorized)

        var tampered = request
        tampered.body[20] ^= 1
        guard case .refused(let tamperedError) = Self.open(tampered) else {
            Issue.record("a tampered body was opened")
            return
        }
        #expect(tamperedError.code == .unauthorized)
    }

    @Test func theAnswerIsSealedAndBoundToTheRequestsNonceWithStatusAndHeadersKept() throws {
        let (request, nonce) = try Self.encrypted("host=a.example.test")
        guard case .opened(_, let exchange) = Self.open(request) else {
            Issue.record("not opened")
            return
        }
        let plain = HTTPResponse(status: 429, headers: [("Retry-After", "1")], body: Array(#"{"ok":1}"#.utf8))
        let sealed = exchange.seal(plain)
        #expect(sealed.status == 429)
        #expect(sealed.contentType == "application/octet-stream")
        #expect(sealed.headers.map(\.0) == ["Retry-After"])
        #expect(sealed.body.count == plain.body.count + 28)
        let answerData = EncryptedExchange.associatedData(.answer, method: "GET", path: Self.path, requestNonce: nonce)
        #expect(try AESGCM.open(sealed.body, key: Self.key, associatedData: answerData) == plain.body)
        #expect(throws: CryptoError.self) {
            try AESGCM.open(
                sealed.body, key: Self.key,
                associatedData: EncryptedExchange.associatedData(
                    .answer, method: "GET", path: Self.path, requestNonce: [UInt8](repeating: 0, count: 12)))
        }
        // A fresh nonce per answer.
        #expect(exchange.seal(plain).body.prefix(12) != sealed.body.prefix(12))
    }

    @Test func aDeferredAnswerIsSealedWhenItArrives() throws {
        let (request, nonce) = try Self.encrypted("host=a.example.test")
        guard case .opened(_, let exchange) = Self.open(request) else {
            Issue.record("not opened")
            return
        }
        let plain = HTTPResponse(status: 200, body: Array("{}".utf8))
        guard case .deferred(let start) = exchange.seal(HandlerResult.deferred { respond in respond(plain) }) else {
            Issue.record("not deferred")
            return
        }
        let received = ReceivedResponse()
        start { received.set($0) }
        let response = try #require(received.value)
        #expect(response.contentType == "application/octet-stream")
        let answerData = EncryptedExchange.associatedData(.answer, method: "GET", path: Self.path, requestNonce: nonce)
        #expect(try AESGCM.open(response.body, key: Self.key, associatedData: answerData) == plain.body)
    }
}

/// The replay memory of signed changes behind the encryption step.
struct EncryptedSignedChangeTests {
    /// An encrypted change is signed outside `enc`: the replay step reads the signature of the
    /// request as received, not of the one its `enc` opened into.
    @Test func aReplayedEncryptedDeleteIsRefusedAndChangesNothing() throws {
        let fixture = ServiceFixture(
            config: .test {
                $0.clientKeys = [ClientKey(id: "m1", secret: ClientAuthenticationTests.manageSecret, role: .manage)]
                $0.requireSignedRequests = true
                $0.aesSecretKey = RequestEncryptionTests.key.map { String(format: "%02x", $0) }.joined()
            })
        let path = "/v1/default/cache"
        var (delete, nonce) = try RequestEncryptionTests.encrypted("host=www.example.test", method: "DELETE", path: path)
        let t = String(Int(fixture.clock.now() + 60))
        let enc = try #require(delete.query["enc"])
        let canonical = try SignatureV1.canonicalString(method: "DELETE", path: path, arguments: [("enc", enc)], expiry: t, body: [])
        let sign = try SignatureV1.signature(secret: ClientAuthenticationTests.manageSecret, canonical: canonical)
        delete.query = QueryArguments(["enc": enc, "kid": "m1", "t": t, "sign": sign])
        #expect(Exchange(fixture.handle(delete)).status == 200)
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.2"]))])
        let replayed = Exchange(fixture.handle(delete))
        #expect(replayed.status == 401)
        let answer = EncryptedExchange.associatedData(.answer, method: "DELETE", path: path, requestNonce: nonce)
        let opened = try AESGCM.open(try #require(replayed.response).body, key: RequestEncryptionTests.key, associatedData: answer)
        #expect(String(decoding: opened, as: UTF8.self).contains("replayed signature"))
        #expect(fixture.engine.cachedResolution(host: HostName("www.example.test")!, family: .a) != nil)
    }
}

private final class ReceivedResponse: Sendable {
    private let state = Mutex<HTTPResponse?>(nil)
    func set(_ response: HTTPResponse) { state.withLock { $0 = response } }
    var value: HTTPResponse? { state.withLock { $0 } }
}

/// The resolve fast path runs the encryption step of the general pipeline for an account with
/// an `aesSecretKey`: a plain hit it lets through is answered fast; an encrypted request (opened
/// and sealed) and a plain one refused by `requireEncryption` are left to the general path.
struct EncryptedFastPathTests {
    private func fixture(_ change: (inout AccountConfig) -> Void) -> ServiceFixture {
        let fixture = ServiceFixture(config: .test(change))
        fixture.seed([("two.example.test", .a, fixture.entry(["127.0.0.11", "127.0.0.12"], ttl: 300))])
        return fixture
    }

    @Test func onlyAPlainHitThatTheAccountAcceptsIsAnsweredFast() throws {
        let head = MemoryHead("GET", "/v1/default/resolve", [("host", "two.example.test")])
        #expect(fixture { _ in }.service.fastResponse(head)?.body != nil)
        let key = String(repeating: "42", count: 32)
        #expect(fixture { $0.aesSecretKey = key }.service.fastResponse(head)?.body != nil)
        let required = fixture {
            $0.aesSecretKey = key; $0.requireEncryption = true
        }
        #expect(required.service.fastResponse(head)?.body == nil)
        #expect(Exchange(required.handle(head.request())).status == 403)
        let withEnc = MemoryHead("GET", "/v1/default/resolve", [("host", "two.example.test"), ("enc", "AAAA")])
        let keyed = fixture { $0.aesSecretKey = key }
        #expect(keyed.service.fastResponse(withEnc)?.body == nil)
        #expect(Exchange(keyed.handle(withEnc.request())).status == 400)
        // `enc` to an account without a key is refused (400) by the general path, not answered fast.
        let open = fixture { _ in }
        #expect(open.service.fastResponse(withEnc)?.body == nil)
        #expect(Exchange(open.handle(withEnc.request())).status == 400)
    }
}
