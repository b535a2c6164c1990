import Foundation
import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// The EMAS HTTPDNS API in process: its signature, its bodies, its errors and its routes. Time is
/// the fixture's manual clock (1 700 000 000).
@Suite struct EMASTests {
    static let secret = "0123456789abcdef"

    private func fixture(keys: Bool = true, requireSigned: Bool = false, limits: HTTPDNSService.Limits = .init()) -> ServiceFixture {
        let fixture = ServiceFixture(
            config: .test {
                if keys { $0.clientKeys = [ClientKey(id: "k1", secret: Self.secret, role: .resolve)] }
                $0.requireSignedRequests = requireSigned
            }, limits: limits)
        fixture.seed([
            ("a.example.test", .a, fixture.entry(["192.0.2.1", "192.0.2.2"], ttl: 60)),
            ("a.example.test", .aaaa, fixture.entry(["2001:db8::1"], ttl: 30)),
            ("b.example.test", .a, fixture.entry(["192.0.2.3"])),
            ("www.example.test", .a, fixture.entry(["192.0.2.10"])),
        ])
        return fixture
    }

    private func get(_ fixture: ServiceFixture, _ path: String, _ query: [String: String], peer: String = "198.51.100.7") -> Exchange {
        Exchange(
            fixture.handle(HTTPRequest(method: "GET", path: path, query: query, peer: peer)),
            releasing: fixture.upstreams + [fixture.fallback])
    }

    @Test func theSignatureIsTheMD5OfHostsSecretAndExpiry() throws {
        // python3 -c 'import hashlib; print(hashlib.md5(b"www.example.test-0123456789abcdef-1700000600").hexdigest())'
        #expect(
            try EMASSignature.signature(hosts: "www.example.test", secret: Self.secret, expiry: "1700000600")
                == "d4d8f6ba43d047e47a50b1a42eb798ed")
        // python3 -c 'import hashlib; print(hashlib.md5(b"a.example.test,b.example.test-0123456789abcdef-1700000600").hexdigest())'
        #expect(
            try EMASSignature.signature(hosts: "a.example.test,b.example.test", secret: Self.secret, expiry: "1700000600")
                == "97180eee4d748126ef3e0590ab99b066")
        // docs/emas.md's worked example.
        #expect(
            try EMASSignature.signature(hosts: "www.example.com", secret: "emas-example-secret-16", expiry: "1767225600")
                == "2afb8d08f62cafe0d2e3e24fce7331c1")
        #expect(
            try EMASSignature.signature(hosts: "www.example.com,api.example.com", secret: "emas-example-secret-16", expiry: "1767225600")
                == "3946ab5664667e4f9a06a1c000880e3a")
        #expect(
            try EMASSignature.matches(
                "D4D8F6BA43D047E47A50B1A42EB798ED", hosts: "www.example.test", secret: Self.secret, expiry: "1700000600"))
        #expect(
            try !EMASSignature.matches(
                "d4d8f6ba43d047e47a50b1a42eb798ed", hosts: "www.example.test", secret: Self.secret, expiry: "1700000601"))
    }

    @Test func oneHostIsAnsweredInTheEMASShapeWithTheClientAddress() {
        let exchange = get(fixture(), "/default/d", ["host": "www.example.test"])
        #expect(exchange.status == 200)
        #expect(
            exchange.text
                == #"{"host":"www.example.test","ips":["192.0.2.10"],"ipsv6":[],"ttl":300,"origin_ttl":300,"client_ip":"198.51.100.7"}"#)
    }

    @Test func bothFamiliesInAnyOrderGiveTheSmallerTTLAndTheIPArgumentIsTheClient() {
        for query in ["4,6", "6,4", "6, 4"] {
            let exchange = get(fixture(), "/default/d", ["host": "a.example.test", "query": query, "ip": "203.0.113.9", "unknown": "x"])
            #expect(
                exchange.text
                    == #"{"host":"a.example.test","ips":["192.0.2.1","192.0.2.2"],"ipsv6":["2001:db8::1"],"ttl":30,"origin_ttl":30,"client_ip":"203.0.113.9"}"#
            )
        }
        #expect(get(fixture(), "/default/d", ["host": "a.example.test", "query": "6"]).text.contains(#""ips":[],"ipsv6":["2001:db8::1"]"#))
    }

    @Test func aBatchHasOneElementPerHostInTheOrderAsked() {
        let exchange = get(fixture(), "/default/resolve", ["host": "b.example.test,a.example.test"])
        #expect(
            exchange.text
                == #"{"dns":[{"host":"b.example.test","ips":["192.0.2.3"],"ipsv6":[],"ttl":300,"origin_ttl":300},{"host":"a.example.test","ips":["192.0.2.1","192.0.2.2"],"ipsv6":[],"ttl":60,"origin_ttl":60}]}"#
        )
    }

    @Test func aHitThroughTheEMASPathCountsAsAHit() {
        let fixture = fixture()
        let before = fixture.engine.metrics.cacheHits.value
        #expect(get(fixture, "/default/d", ["host": "www.example.test"]).status == 200)
        #expect(fixture.engine.metrics.cacheHits.value == before + 1)
    }

    @Test(arguments: [
        (["host": ""], "MissingArgument", 400),
        ([:], "MissingArgument", 400),
        (["host": "bad_host!"], "InvalidHost", 400),
        (["host": "a.example.test,b.example.test"], "InvalidHost", 400),
        (["host": "www.example.test", "query": "5"], "InvalidParameter", 400),
    ])
    func badArgumentsGetEMASErrors(query: [String: String], code: String, status: Int) {
        let exchange = get(fixture(), "/default/d", query)
        #expect(exchange.status == status)
        #expect(exchange.object["code"] as? String == code)
    }

    @Test func moreThanFiveHostsAreTooMany() {
        let hosts = (1...6).map { "h\($0).example.test" }.joined(separator: ",")
        let exchange = get(fixture(), "/default/resolve", ["host": hosts])
        #expect(exchange.status == 400)
        #expect(exchange.object["code"] as? String == "TooManyHosts")
    }

    @Test func anUnknownAccountIsInvalidAccountAndAWrongMethodIsMethodNotAllowed() {
        let fixture = fixture()
        let unknown = get(fixture, "/nope/d", ["host": "www.example.test"])
        #expect(unknown.status == 403)
        #expect(unknown.object["code"] as? String == "InvalidAccount")
        let post = fixture.send("POST", "/default/d", query: ["host": "www.example.test"])
        #expect(post.status == 405)
        #expect(post.object["code"] as? String == "MethodNotAllowed")
        #expect(post.header("Allow") == "GET")
    }

    private func signedQuery(_ hosts: String, t: Int, secret: String = Self.secret) throws -> [String: String] {
        ["host": hosts, "t": String(t), "s": try EMASSignature.signature(hosts: hosts, secret: secret, expiry: String(t))]
    }

    @Test func aSignedRequestIsCheckedForExpiryKeyAndHostList() throws {
        let fixture = fixture(requireSigned: true)
        let now = 1_700_000_000
        #expect(get(fixture, "/default/sign_d", try signedQuery("www.example.test", t: now + 600)).status == 200)
        #expect(get(fixture, "/default/sign_resolve", try signedQuery("a.example.test,b.example.test", t: now + 60)).status == 200)
        let expired = get(fixture, "/default/sign_d", try signedQuery("www.example.test", t: now - 1))
        #expect(expired.status == 403)
        #expect(expired.object["code"] as? String == "SignatureExpired")
        let ahead = get(fixture, "/default/sign_d", try signedQuery("www.example.test", t: now + 601))
        #expect(ahead.object["code"] as? String == "InvalidSignature")
        #expect(ahead.status == 403)
        let wrongSecret = get(fixture, "/default/sign_d", try signedQuery("www.example.test", t: now + 60, secret: "another-secret-0123"))
        #expect(wrongSecret.object["code"] as? String == "InvalidSignature")
        var tampered = try signedQuery("a.example.test,b.example.test", t: now + 60)
        tampered["host"] = "a.example.test,www.example.test"
        #expect(get(fixture, "/default/sign_resolve", tampered).object["code"] as? String == "InvalidSignature")
        #expect(get(fixture, "/default/sign_d", ["host": "www.example.test"]).object["code"] as? String == "InvalidSignature")
    }

    @Test func unsignedPathsAnswer403WhenTheAccountRequiresSignatures() {
        let exchange = get(fixture(requireSigned: true), "/default/d", ["host": "www.example.test"])
        #expect(exchange.status == 403)
        #expect(exchange.object["code"] as? String == "InvalidSignature")
        #expect(exchange.header("WWW-Authenticate") == nil)
        #expect(get(fixture(requireSigned: false), "/default/d", ["host": "www.example.test"]).status == 200)
    }

    @Test func anAccountThatRequiresEncryptionRefusesTheEMASPathsInTheEMASFormat() {
        let fixture = ServiceFixture(
            config: .test {
                $0.aesSecretKey = String(repeating: "0f", count: 32)
                $0.requireEncryption = true
            })
        let exchange = get(fixture, "/default/d", ["host": "www.example.test"])
        #expect(exchange.status == 403)
        #expect(exchange.object["code"] as? String == "Forbidden", "\(exchange.text)")
        #expect(exchange.object["error"] == nil)
    }

    @Test func signedPathsOfAnAccountWithoutKeysAreRefused() throws {
        let exchange = get(fixture(keys: false), "/default/sign_d", try signedQuery("www.example.test", t: 1_700_000_060))
        #expect(exchange.status == 403)
        #expect(exchange.object["code"] as? String == "InvalidSignature")
    }

    @Test func serviceAddressesAreSplitByFamily() {
        let exchange = get(
            fixture(limits: .init(advertisedAddresses: ["192.0.2.53:8080", "[2001:db8::53]:8080", "dns.example.test"])), "/default/ss", [:])
        #expect(exchange.text == #"{"service_ip":["192.0.2.53:8080","dns.example.test"],"service_ipv6":["[2001:db8::53]:8080"]}"#)
    }

    @Test func serverFailuresAreInternalErrorsAndKeepTheirHeaders() {
        let response = EMASRendering.error(APIError(.storeUnavailable, "disk", headers: [("Retry-After", "1")]))
        #expect(response.status == 500)
        #expect(response.bodyText == #"{"code":"InternalError","message":"disk"}"#)
        #expect(response.headers.map(\.0) == ["Retry-After"])
    }

    /// A host no upstream could resolve is the upstreams' failure, not a server error of httpdnsd.
    @Test func upstreamFailuresKeepTheirGatewayCodes() {
        let timeout = EMASRendering.error(APIError(.upstreamTimeout, "slow"))
        #expect(timeout.status == 504)
        #expect(timeout.bodyText == #"{"code":"UpstreamTimeout","message":"slow"}"#)
        let failed = EMASRendering.error(APIError(.upstreamFailed, "refused"))
        #expect(failed.status == 502)
        #expect(failed.bodyText == #"{"code":"UpstreamFailed","message":"refused"}"#)
    }
}

/// Ids that the EMAS paths (`/{account}/...`) would make collide with other routes.
@Suite struct ReservedAccountIDTests {
    @Test(arguments: ["v1", "resolve", "dns-query", "healthz", "readyz", "metrics", "accounts"])
    func reservedIDsAreRefusedByTheConfigAndTheAdminAPI(id: String) {
        #expect(AccountID(id) == nil)
        let fixture = ServiceFixture(adminToken: "token")
        let exchange = fixture.send("PUT", "/v1/accounts/\(id)", authorization: "Bearer token", body: Array("{}".utf8))
        #expect(exchange.status == 400)
        #expect(exchange.errorMessage?.contains("reserved") == true)
    }
}
