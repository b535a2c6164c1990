import HTTPDNSCore
import HTTPDNSCrypto
import HTTPDNSWire
import Testing

@testable import HTTPDNSServer

/// The EMAS and DoH JSON signature checks and the encryption step's decision on a plain request
/// run on the borrowed request head (`SignedRequest`) exactly as on the general path's copy of
/// the same request, so the fast path answers only what the general path lets through, and
/// leaves the rest to it. Time is the fixture's manual clock (1 700 000 000).
@Suite struct FormatSignatureFastPathTests {
    static let secret = "format-signature-secret-0123"
    static let manageSecret = "format-signature-manage-0123"
    static let now = 1_700_000_000
    static let aesKey = String(repeating: "42", count: 32)

    private func fixture(requireSigned: Bool = true, _ change: (inout AccountConfig) -> Void = { _ in }) -> ServiceFixture {
        let fixture = ServiceFixture(
            config: .test {
                $0.clientKeys = [
                    ClientKey(id: "k1", secret: Self.secret, role: .resolve),
                    ClientKey(id: "m1", secret: Self.manageSecret, role: .manage),
                    ClientKey(id: "K2", secret: Self.secret, role: .resolve),
                ]
                $0.requireSignedRequests = requireSigned
                change(&$0)
            })
        fixture.seed([("www.example.test", .a, fixture.entry(["192.0.2.10"])), ("b.example.test", .a, fixture.entry(["192.0.2.3"]))])
        return fixture
    }

    private static func emas(_ hosts: String, t: Int, secret: String = secret) throws -> [(String, String?)] {
        [("host", hosts), ("t", String(t)), ("s", try EMASSignature.signature(hosts: hosts, secret: secret, expiry: String(t)))]
    }

    private static func json(_ name: String, ts: Int, keyID: String = "k1", secret: String = secret, uid: String = "default") throws
        -> [(String, String?)]
    {
        let key = try DoHJSONSignature.key(uid: uid, secret: secret, timestamp: String(ts), name: name, accessKeyID: keyID)
        return [("name", name), ("uid", uid), ("ak", keyID), ("ts", String(ts)), ("key", key)]
    }

    /// `GET /default/sign_d` requests that each check tells apart.
    static func emasArguments() throws -> [(String, [(String, String?)])] {
        let good = try emas("www.example.test", t: now + 60)
        return [
            ("valid", good),
            ("upper-case hex", good.map { $0.0 == "s" ? ($0.0, $0.1?.uppercased()) : $0 }),
            ("no s", good.filter { $0.0 != "s" }),
            ("no t", good.filter { $0.0 != "t" }),
            ("t not digits", good.map { $0.0 == "t" ? ("t", "17e8") : $0 }),
            ("t too long", good.map { $0.0 == "t" ? ("t", "1234567890123") : $0 }),
            ("expired", try emas("www.example.test", t: now - 1)),
            ("too far ahead", try emas("www.example.test", t: now + 100_000)),
            ("wrong secret", try emas("www.example.test", t: now + 60, secret: "not-the-secret")),
            ("other host", good.map { $0.0 == "host" ? ("host", "b.example.test") : $0 }),
            ("s one short", good.map { $0.0 == "s" ? ("s", String($0.1!.dropLast())) : $0 }),
            ("s with a non-ASCII letter", good.map { $0.0 == "s" ? ("s", String($0.1!.dropLast()) + "\u{212A}") : $0 }),
            // The first value is read (and the EMAS API allows a name twice).
            ("repeated t", good + [("t", "1")]),
            // The signature of the empty host list (the handler then asks for a host).
            ("no host", try emas("", t: now + 60).filter { $0.0 != "host" }),
        ]
    }

    /// `GET /resolve` requests that each check tells apart.
    static func jsonArguments() throws -> [(String, [(String, String?)])] {
        let good = try json("www.example.test", ts: now)
        return [
            ("valid", good),
            ("unsigned", [("name", "www.example.test")]),
            ("upper-case hex", good.map { $0.0 == "key" ? ($0.0, $0.1?.uppercased()) : $0 }),
            ("no uid", good.filter { $0.0 != "uid" }),
            ("only ts", [("name", "www.example.test"), ("ts", String(now))]),
            ("ts not digits", good.map { $0.0 == "ts" ? ("ts", "-1") : $0 }),
            ("old", try json("www.example.test", ts: now - 100_000)),
            ("ahead", try json("www.example.test", ts: now + 100_000)),
            ("unknown key", try json("www.example.test", ts: now, keyID: "k9")),
            ("manage key", try json("www.example.test", ts: now, keyID: "m1", secret: manageSecret)),
            ("wrong secret", try json("www.example.test", ts: now, secret: "not-the-secret")),
            ("other name", good.map { $0.0 == "name" ? ("name", "b.example.test") : $0 }),
            // A key id compares with `ak` as text: the Kelvin sign is the letter K.
            ("ak in another normal form", try json("www.example.test", ts: now, keyID: "\u{212A}2")),
        ]
    }

    private func outcome(_ result: Result<Authentication, APIError>) -> String {
        switch result {
        case .success(let authentication): "\(authentication)"
        case .failure(let error): "\(error.code) \(error.message)"
        }
    }

    @Test func theEMASSignatureIsCheckedOnTheHeadAsOnItsRequest() throws {
        let fixture = fixture()
        var outcomes: [String: String] = [:]
        for (label, arguments) in try Self.emasArguments() {
            let head = MemoryHead("GET", "/default/sign_d", arguments)
            for config in [fixture.engine.config, .hidden] {
                let fromHead = outcome(fixture.service.authenticateEMAS(head, config: config))
                #expect(fromHead == outcome(fixture.service.authenticateEMAS(head.request(), config: config)), "\(label)")
            }
            outcomes[label] = outcome(fixture.service.authenticateEMAS(head, config: fixture.engine.config))
        }
        #expect(outcomes["valid"] == "\(Authentication.key(id: "k1", role: .resolve))")
        for label in ["upper-case hex", "repeated t", "no host"] { #expect(outcomes[label] == outcomes["valid"], "\(label)") }
        #expect(outcomes["expired"]?.contains("signature expired: t=1699999999") == true)
        for label in ["wrong secret", "other host", "s one short", "s with a non-ASCII letter"] {
            #expect(outcomes[label]?.contains("bad signature") == true, "\(label): \(outcomes[label] ?? "")")
        }
    }

    @Test func theDoHJSONSignatureIsCheckedOnTheHeadAsOnItsRequest() throws {
        let fixture = fixture()
        var outcomes: [String: String] = [:]
        for (label, arguments) in try Self.jsonArguments() {
            let head = MemoryHead("GET", "/resolve", arguments)
            for config in [fixture.engine.config, .hidden] {
                let fromHead = outcome(fixture.service.authenticateDoHJSON(head, config: config))
                #expect(fromHead == outcome(fixture.service.authenticateDoHJSON(head.request(), config: config)), "\(label)")
            }
            outcomes[label] = outcome(fixture.service.authenticateDoHJSON(head, config: fixture.engine.config))
        }
        #expect(outcomes["valid"] == "\(Authentication.key(id: "k1", role: .resolve))")
        #expect(outcomes["upper-case hex"] == outcomes["valid"])
        #expect(outcomes["manage key"] == "\(Authentication.key(id: "m1", role: .manage))")
        #expect(outcomes["ak in another normal form"] == "\(Authentication.key(id: "K2", role: .resolve))")
        for label in ["unknown key", "wrong secret", "other name"] {
            #expect(outcomes[label]?.contains("bad signature") == true, "\(label): \(outcomes[label] ?? "")")
        }
    }

    /// The fast path's body for `head` (nil when it left the request) and the general path's
    /// answer to the same request.
    private func bothPaths(_ fixture: ServiceFixture, _ head: MemoryHead) -> (fast: [UInt8]?, general: Exchange) {
        let fast = fixture.service.fastResponse(head)?.body
        return (fast, Exchange(fixture.handle(head.request()), releasing: fixture.upstreams + [fixture.fallback]))
    }

    @Test func aSignedHitOfEitherFormatIsAnsweredFastOnlyWhenTheGeneralPathLetsItThrough() throws {
        let fixture = fixture()
        let requests =
            try Self.emasArguments().map { ($0.0, MemoryHead("GET", "/default/sign_d", $0.1)) }
            + Self.jsonArguments().map { ($0.0, MemoryHead("GET", "/resolve", $0.1)) }
        var answered = 0
        for (label, head) in requests {
            let hits = fixture.engine.metrics.cacheHits.value
            let (fast, general) = bothPaths(fixture, head)
            if let fast {
                answered += 1
                #expect(general.status == 200, "\(label): answered fast, refused by the general path")
                #expect(fast == general.response?.body, "\(label)")
                #expect(fixture.engine.metrics.cacheHits.value == hits + 2, "\(label)")
            } else {
                #expect(general.status != 200, "\(label): left to the general path, which answered it")
                // Nothing refused is counted as a hit.
                #expect(fixture.engine.metrics.cacheHits.value == hits, "\(label)")
            }
        }
        // Both formats' valid and upper-case requests, EMAS's repeated `t`, DoH JSON's manage key
        // and its `ak` in another form.
        #expect(answered == 7)
    }

    @Test func aPlainHitOfAnAccountWithAnAESKeyIsAnsweredFastInEveryFormatUnlessEncryptionIsRequired() throws {
        let query = try DNSQueryWriter.query(name: "www.example.test", type: 1, id: 7, clientSubnet: nil)
        let heads = [
            MemoryHead("GET", "/v1/default/resolve", [("host", "www.example.test")]),
            MemoryHead("GET", "/default/d", [("host", "www.example.test")]),
            MemoryHead("GET", "/default/sign_d", try Self.emas("www.example.test", t: Self.now + 60)),
            MemoryHead("GET", "/resolve", [("name", "www.example.test")]),
            MemoryHead("GET", "/resolve", try Self.json("www.example.test", ts: Self.now)),
            MemoryHead("GET", "/dns-query", [("dns", Base64URL.encode(query))]),
        ]
        let keyed = fixture(requireSigned: false) { $0.aesSecretKey = Self.aesKey }
        let required = fixture(requireSigned: false) {
            $0.aesSecretKey = Self.aesKey
            $0.requireEncryption = true
        }
        for head in heads {
            let (fast, general) = bothPaths(keyed, head)
            #expect(fast != nil, "\(head.request().path)")
            #expect(fast == general.response?.body, "\(head.request().path)")
            let (refusedFast, refused) = bothPaths(required, head)
            #expect(refusedFast == nil, "\(head.request().path)")
            #expect(refused.status == 403, "\(head.request().path)")
        }
    }

    @Test func aPlainRequestGoesOnUnlessTheAccountRequiresEncryption() {
        #expect(RequestOpening.plainRefusal(account: "a1", requireEncryption: false) == nil)
        let refusal = RequestOpening.plainRefusal(account: "a1", requireEncryption: true)
        #expect(refusal?.code == .forbidden)
        #expect(refusal?.message == "account 'a1' requires encrypted requests: send enc=... (see docs/encryption.md)")
        let request = HTTPRequest(method: "GET", path: "/v1/a1/resolve", query: ["host": "a.test"])
        let key = AccountConfig.aesKeyBytes(hex: Self.aesKey)
        guard case .plain = RequestOpening.open(request, account: "a1", key: key, requireEncryption: false) else {
            Issue.record("a plain request was not let through")
            return
        }
        guard case .refused(let error) = RequestOpening.open(request, account: "a1", key: key, requireEncryption: true) else {
            Issue.record("a plain request was let through although encryption is required")
            return
        }
        #expect(error.message == refusal?.message)
    }
}
