import Foundation
import HTTPDNSCore
import HTTPDNSCrypto
import Testing

@testable import HTTPDNSServer

/// The DoH JSON API in process: its bodies, its `type` argument, its account choice, its
/// signature and its errors. Time is the fixture's manual clock (1 700 000 000).
@Suite struct DoHJSONTests {
    static let secret = "0123456789abcdef"
    static let now = 1_700_000_000

    private func fixture(keys: Bool = true, requireSigned: Bool = false, ispEnable: Bool = false) -> ServiceFixture {
        let fixture = ServiceFixture(
            config: .test {
                if keys {
                    $0.clientKeys = [ClientKey(id: "k1", secret: Self.secret, role: .resolve)]
                }
                $0.requireSignedRequests = requireSigned
                $0.ispEnable = ispEnable
            })
        fixture.seed([
            ("www.example.test", .a, fixture.entry(["192.0.2.10", "192.0.2.11"], ttl: 287)),
            ("www.example.test", .aaaa, fixture.entry(["2001:db8::10"], ttl: 60)),
            ("nx.example.test", .a, fixture.entry([], ttl: 30, nxdomain: true)),
            ("empty.example.test", .a, fixture.entry([], ttl: 30)),
            ("gone.example.test", .a, fixture.entry([], ttl: 30, nxdomain: true, soa: ServiceFixture.zoneSOA)),
            ("v4only.example.test", .aaaa, fixture.entry([], ttl: 30, soa: ServiceFixture.zoneSOA)),
        ])
        return fixture
    }

    private func get(_ fixture: ServiceFixture, _ query: [String: String], path: String = "/resolve", accept: String? = nil) -> Exchange {
        var request = HTTPRequest(method: "GET", path: path, query: query, peer: "198.51.100.7")
        request.accept = accept
        return Exchange(fixture.handle(request), releasing: fixture.upstreams + [fixture.fallback])
    }

    // MARK: Bodies

    @Test func anAddressAnswerIsTheDoHJSONObjectWithOneRecordPerAddress() {
        let exchange = get(fixture(), ["name": "www.example.test", "type": "A"])
        #expect(exchange.status == 200)
        #expect(
            exchange.text
                == #"{"Status":0,"TC":false,"RD":true,"RA":true,"AD":false,"CD":false,"Question":[{"name":"www.example.test.","type":1}],"Answer":[{"name":"www.example.test.","type":1,"TTL":287,"data":"192.0.2.10"},{"name":"www.example.test.","type":1,"TTL":287,"data":"192.0.2.11"}]}"#
        )
        let v6 = get(fixture(), ["name": "WWW.example.test.", "type": "28"])
        #expect(
            v6.text
                == #"{"Status":0,"TC":false,"RD":true,"RA":true,"AD":false,"CD":false,"Question":[{"name":"www.example.test.","type":28}],"Answer":[{"name":"www.example.test.","type":28,"TTL":60,"data":"2001:db8::10"}]}"#
        )
    }

    @Test func nxdomainIsStatus3AndNoDataIsStatus0BothWithoutAnswer() {
        #expect(
            get(fixture(), ["name": "nx.example.test"]).text
                == #"{"Status":3,"TC":false,"RD":true,"RA":true,"AD":false,"CD":false,"Question":[{"name":"nx.example.test.","type":1}]}"#)
        #expect(
            get(fixture(), ["name": "empty.example.test"]).text
                == #"{"Status":0,"TC":false,"RD":true,"RA":true,"AD":false,"CD":false,"Question":[{"name":"empty.example.test.","type":1}]}"#
        )
    }

    /// A negative answer that kept its zone's SOA carries it as WIRE-FORMATS §1 shows it, with
    /// the answer's remaining TTL; `short=1` stays the bare (empty) array.
    @Test func aNegativeAnswerWithTheZoneSOACarriesItInAuthority() {
        let fixture = fixture()
        fixture.clock.advance(by: 4)
        #expect(
            get(fixture, ["name": "gone.example.test"]).text
                == #"{"Status":3,"TC":false,"RD":true,"RA":true,"AD":false,"CD":false,"Question":[{"name":"gone.example.test.","type":1}],"Authority":[{"name":"example.test.","type":6,"TTL":26,"data":"ns.example.test. hostmaster.example.test. 2026120301 3600 900 604800 45"}]}"#
        )
        #expect(
            get(fixture, ["name": "v4only.example.test", "type": "AAAA"]).text
                == #"{"Status":0,"TC":false,"RD":true,"RA":true,"AD":false,"CD":false,"Question":[{"name":"v4only.example.test.","type":28}],"Authority":[{"name":"example.test.","type":6,"TTL":26,"data":"ns.example.test. hostmaster.example.test. 2026120301 3600 900 604800 45"}]}"#
        )
        #expect(get(fixture, ["name": "gone.example.test", "short": "1"]).text == "[]")
    }

    @Test func shortIsTheBareArrayOfAddresses() {
        #expect(get(fixture(), ["name": "www.example.test", "short": "1"]).text == #"["192.0.2.10","192.0.2.11"]"#)
        #expect(get(fixture(), ["name": "nx.example.test", "short": "1"]).text == "[]")
    }

    @Test func aNameNoUpstreamCouldAnswerIsServfailWithAComment() {
        let result = HostResult(
            host: HostName("down.example.test")!, families: [(.a, .failure(ResolveFailure(timedOut: true, message: "timed out")))])
        let response = DoHJSONRendering.answer(result, family: .a, short: true)
        #expect(response.status == 200)
        #expect(
            response.bodyText
                == #"{"Status":2,"TC":false,"RD":true,"RA":true,"AD":false,"CD":false,"Question":[{"name":"down.example.test.","type":1}],"Comment":"could not resolve down.example.test: timed out"}"#
        )
    }

    @Test func aHitThroughTheDoHJSONPathCountsAsAHit() {
        let fixture = fixture()
        let before = fixture.engine.metrics.cacheHits.value
        #expect(get(fixture, ["name": "www.example.test"]).status == 200)
        #expect(fixture.engine.metrics.cacheHits.value == before + 1)
        #expect(fixture.upstream.totalCalls == 0)
    }

    // MARK: Arguments

    @Test(
        arguments: [
            (nil, RecordFamily.a), ("", .a), ("A", .a), ("a", .a), ("1", .a), ("AAAA", .aaaa), ("aaaa", .aaaa), ("28", .aaaa),
        ] as [(String?, RecordFamily)])
    func typeIsANumberOrAMnemonic(text: String?, family: RecordFamily) throws {
        #expect(try DoHJSONHandler.family(text).get() == family)
    }

    @Test(arguments: [
        ("MX", "UnsupportedType"), ("5", "UnsupportedType"), ("65", "UnsupportedType"), ("https", "UnsupportedType"),
        ("65536", "InvalidParameter"), ("A;B", "InvalidParameter"), ("-1", "InvalidParameter"),
    ])
    func otherTypesAreRefusedInTheDoHJSONForm(text: String, code: String) {
        let exchange = get(fixture(), ["name": "www.example.test", "type": text])
        #expect(exchange.status == 400)
        #expect(exchange.object["Code"] as? String == code)
        #expect(exchange.object["Status"] as? Int == (code == "UnsupportedType" ? 4 : 1))
        #expect(exchange.object["Comment"] is String)
    }

    @Test func missingAndInvalidNamesAre400() {
        let missing = get(fixture(), [:])
        #expect(missing.status == 400)
        #expect(missing.object["Code"] as? String == "MissingArgument")
        let invalid = get(fixture(), ["name": "bad_name!"])
        #expect(invalid.status == 400)
        #expect(invalid.object["Code"] as? String == "InvalidHost")
        #expect(invalid.object["Status"] as? Int == 1)
        #expect(
            get(fixture(), ["name": "www.example.test", "edns_client_subnet": "not-a-subnet"]).object["Code"] as? String
                == "InvalidParameter")
    }

    @Test func anAccountThatRequiresEncryptionRefusesTheDoHJSONPathInItsForm() {
        let fixture = ServiceFixture(
            config: .test {
                $0.aesSecretKey = String(repeating: "0f", count: 32)
                $0.requireEncryption = true
            })
        let exchange = get(fixture, ["name": "www.example.test"])
        #expect(exchange.status == 403)
        #expect(exchange.object["Code"] as? String == "Forbidden", "\(exchange.text)")
        #expect(exchange.object["Status"] as? Int == 5)
    }

    // MARK: Accounts

    @Test func uidChoosesTheAccountAndItsAbsenceTheDefaultOne() {
        let fixture = fixture()
        fixture.registry.upsert("12345", config: .test())
        fixture.seed([("www.example.test", .a, fixture.entry(["192.0.2.99"]))], account: "12345")
        #expect(get(fixture, ["name": "www.example.test", "uid": "12345", "short": "1"]).text == #"["192.0.2.99"]"#)
        #expect(get(fixture, ["name": "www.example.test", "short": "1"]).text == #"["192.0.2.10","192.0.2.11"]"#)
        let unknown = get(fixture, ["name": "www.example.test", "uid": "nope"])
        #expect(unknown.status == 404)
        #expect(unknown.object["Code"] as? String == "UnknownAccount")
        #expect(unknown.object["Status"] as? Int == 5)
    }

    @Test func ednsClientSubnetChoosesTheNetworkOfAnISPEnabledAccount() throws {
        let fixture = fixture(ispEnable: true)
        _ = get(fixture, ["name": "other.example.test", "edns_client_subnet": "203.0.113.77/24"])
        #expect(try #require(fixture.upstream.queries.last).clientSubnet == "203.0.113.0/24")
        _ = get(fixture, ["name": "third.example.test"])
        #expect(try #require(fixture.upstream.queries.last).clientSubnet == "198.51.100.0/24")
    }

    @Test func dnsQueryServesTheJSONAPIOnlyWithTheDNSJSONAcceptHeader() {
        let fixture = fixture()
        let json = get(
            fixture, ["name": "www.example.test", "short": "1"], path: "/dns-query", accept: "text/html, Application/DNS-JSON; q=0.9")
        #expect(json.text == #"["192.0.2.10","192.0.2.11"]"#)
        // Any other GET is RFC 8484 (www.example.test A, ID 0).
        for accept in [nil, "application/dns-message"] {
            let other = get(fixture, ["dns": "AAABAAABAAAAAAAAA3d3dwdleGFtcGxlBHRlc3QAAAEAAQ"], path: "/dns-query", accept: accept)
            #expect(other.status == 200)
            #expect(other.response?.contentType == "application/dns-message")
        }
    }

    @Test func requestsAreCountedAsTheJSONProtocol() {
        let fixture = fixture()
        _ = get(fixture, ["name": "www.example.test"])
        _ = get(fixture, ["name": "www.example.test", "uid": "nope"])
        let metrics = MetricsText(fixture.get("/metrics").text)
        #expect(metrics.sum("httpdns_request_duration_seconds_count", ["protocol": "json"]) == 2)
    }

    // MARK: Signature

    @Test func theSignatureIsTheSHA256OfUidSecretTsNameAndAk() throws {
        // python3 -c 'import hashlib; print(hashlib.sha256(b"default0123456789abcdef1700000000www.example.testk1").hexdigest())'
        #expect(
            try DoHJSONSignature.key(
                uid: "default", secret: Self.secret, timestamp: "1700000000", name: "www.example.test", accessKeyID: "k1")
                == "bb10f396c359f47c56b30e931b25f333c31af48030a63c09d3e848fd44e8006b")
    }

    private func signed(_ name: String, ts: Int, keyID: String = "k1", secret: String = Self.secret, uid: String = "default") throws
        -> [String: String]
    {
        [
            "name": name, "uid": uid, "ak": keyID, "ts": String(ts),
            "key": try DoHJSONSignature.key(uid: uid, secret: secret, timestamp: String(ts), name: name, accessKeyID: keyID),
        ]
    }

    @Test func aSignedRequestIsCheckedForKeyTimeAndName() throws {
        let fixture = fixture(requireSigned: true)
        #expect(get(fixture, try signed("www.example.test", ts: Self.now)).status == 200)
        #expect(get(fixture, try signed("www.example.test", ts: Self.now - 600)).status == 200)
        #expect(get(fixture, try signed("www.example.test", ts: Self.now + 600)).status == 200)
        let old = get(fixture, try signed("www.example.test", ts: Self.now - 601))
        #expect(old.status == 403)
        #expect(old.object["Code"] as? String == "SignatureExpired")
        #expect(old.object["Status"] as? Int == 5)
        #expect(get(fixture, try signed("www.example.test", ts: Self.now + 601)).object["Code"] as? String == "InvalidSignature")
        #expect(
            get(fixture, try signed("www.example.test", ts: Self.now, secret: "wrong-secret-0123")).object["Code"] as? String
                == "InvalidSignature")
        #expect(get(fixture, try signed("www.example.test", ts: Self.now, keyID: "k9")).object["Code"] as? String == "InvalidSignature")
        var tampered = try signed("www.example.test", ts: Self.now)
        tampered["name"] = "nx.example.test"
        #expect(get(fixture, tampered).status == 403)
        var partial = try signed("www.example.test", ts: Self.now)
        partial["key"] = nil
        #expect(get(fixture, partial).object["Code"] as? String == "InvalidSignature")
        let unsigned = get(fixture, ["name": "www.example.test"])
        #expect(unsigned.status == 403)
        #expect(unsigned.header("WWW-Authenticate") == nil)
        #expect(unsigned.object["Code"] as? String == "InvalidSignature")
    }

    @Test func unsignedRequestsPassWhenTheAccountDoesNotRequireSignatures() throws {
        #expect(get(fixture(requireSigned: false), ["name": "www.example.test"]).status == 200)
        #expect(get(fixture(requireSigned: false), try signed("www.example.test", ts: Self.now, secret: "wrong-secret-0123")).status == 403)
        #expect(get(fixture(keys: false), ["name": "www.example.test"]).status == 200)
        #expect(get(fixture(keys: false), try signed("www.example.test", ts: Self.now)).status == 403)
    }
}
