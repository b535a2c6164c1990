import Foundation
import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// `GET`/`PUT /v1/{account}/policy`: the document holds the policy keys only, its `ETag` guards
/// every change (428 without `If-Match`, 412 when stale), a bad document changes nothing, and a
/// change is stored as an admin change is, leaving the account's other keys as they were.
@Suite struct PolicyHandlerTests {
    static let resolveSecret = "resolve-secret-0123456789"
    static let manageSecret = "manage-secret-0123456789"

    private static func config(signed: Bool = false) -> AccountConfig {
        .test {
            $0.maxCacheTTL = 600
            $0.domains = try! DomainPolicy(mode: .any, allow: [], deny: ["ads.example.test"])
            if signed {
                $0.clientKeys = [
                    ClientKey(id: "r1", secret: resolveSecret, role: .resolve), ClientKey(id: "m1", secret: manageSecret, role: .manage),
                ]
                $0.requireSignedRequests = true
            }
        }
    }

    private func put(_ fixture: ServiceFixture, _ body: String, ifMatch: String?) -> Exchange {
        var request = HTTPRequest(method: "PUT", path: "/v1/default/policy", body: Array(body.utf8))
        request.ifMatch = ifMatch
        return Exchange(fixture.handle(request)).awaited()
    }

    @Test func getShowsThePolicyKeysOnlyWithAnETag() throws {
        let fixture = ServiceFixture(config: Self.config())
        let got = fixture.get("/v1/default/policy")
        #expect(got.status == 200)
        #expect(got.text == #"{"domains":{"allow":[],"deny":["ads.example.test"],"mode":"any"}}"#)
        let etag = try #require(got.header("ETag"))
        #expect(etag.wholeMatch(of: /"[0-9a-f]{32}"/) != nil, "\(etag)")
        // The same document gives the same tag in another process (a replica): it is made from the text.
        #expect(ServiceFixture(config: Self.config()).get("/v1/default/policy").header("ETag") == etag)
        #expect(ServiceFixture().get("/v1/default/policy").text == "{}")
        #expect(ServiceFixture().get("/v1/default/policy").header("ETag") != etag)
    }

    @Test func aPutWithTheCurrentETagReplacesThePolicyAndNothingElse() throws {
        let fixture = ServiceFixture(config: Self.config())
        let etag = try #require(fixture.get("/v1/default/policy").header("ETag"))
        let document = #"{"dns64Prefix":"64:ff9b::/96","hostOverrides":[{"hosts":["*.cdn.example.test"],"ttl":30}]}"#
        let put = put(fixture, document, ifMatch: etag)
        #expect(put.status == 200, "\(put.text)")
        #expect(put.text == document)
        let newTag = try #require(put.header("ETag"))
        #expect(newTag != etag)
        let config = fixture.engine.config
        #expect(config.dns64Prefix?.description == "64:ff9b::/96")
        #expect(config.domains == DomainPolicy(), "a key the document leaves out goes back to its default")
        #expect(config.hostOverrides.rules.map(\.ttl) == [30])
        #expect(config.maxCacheTTL == 600, "not a policy key: kept")
        #expect(fixture.engine.lookupOptions.synthesizesAAAA)
        // Stored as an admin change is, before it took effect.
        let saved = try #require(fixture.accountStore.calls.last)
        #expect(saved.id == "default" && saved.json?.contains(#""dns64Prefix":"64:ff9b::/96""#) == true, "\(saved)")
        let again = fixture.get("/v1/default/policy")
        #expect(again.text == document && again.header("ETag") == newTag)
    }

    @Test func rulesAreAPolicyKeyAndTakeEffectWithTheDocument() throws {
        let fixture = ServiceFixture(config: Self.config())
        let etag = try #require(fixture.get("/v1/default/policy").header("ETag"))
        let document = #"{"rules":[{"answer":{"ipv4":["192.0.2.7"],"ttl":60},"hosts":["app.example.test"],"name":"office"}]}"#
        let stored = put(fixture, document, ifMatch: etag)
        #expect(stored.status == 200, "\(stored.text)")
        #expect(fixture.engine.config.rules.rules.count == 1 && fixture.engine.lookupOptions.hasRules)
        #expect(fixture.get("/v1/default/policy").text == document)
        let answer = fixture.get("/v1/default/resolve", ["host": "app.example.test"])
        #expect(answer.status == 200 && answer.text.contains(#""ips":["192.0.2.7"]"#), "\(answer.status) \(answer.text)")
        // A document without the key takes the rules away, as with every policy key.
        let cleared = put(fixture, "{}", ifMatch: stored.header("ETag"))
        #expect(cleared.status == 200 && fixture.engine.config.rules.isEmpty && !fixture.engine.lookupOptions.hasRules)
    }

    @Test func aPutWithoutIfMatchOrWithAStaleETagIsRefusedAndChangesNothing() throws {
        let fixture = ServiceFixture(config: Self.config())
        let etag = try #require(fixture.get("/v1/default/policy").header("ETag"))
        let document = #"{"dns64Prefix":"64:ff9b::/96"}"#
        let missing = put(fixture, document, ifMatch: nil)
        #expect(missing.status == 428 && missing.errorCode == "PreconditionRequired", "\(missing.text)")
        let wrong = put(fixture, document, ifMatch: #""0123456789abcdef0123456789abcdef""#)
        #expect(wrong.status == 412 && wrong.errorCode == "PreconditionFailed", "\(wrong.text)")
        #expect(fixture.engine.config == Self.config())
        // Two editors with the same tag: the first wins, the second is told its copy is stale.
        #expect(put(fixture, document, ifMatch: etag).status == 200)
        let second = put(fixture, #"{"domains":{"mode":"any","deny":["x.example.test"]}}"#, ifMatch: etag)
        #expect(second.status == 412)
        #expect(fixture.engine.config.dns64Prefix != nil && fixture.engine.config.domains == DomainPolicy())
        #expect(fixture.accountStore.calls.count == 1)
        // A weak tag never matches; `*` does (a deliberate overwrite), as in a list.
        let current = try #require(fixture.get("/v1/default/policy").header("ETag"))
        #expect(put(fixture, document, ifMatch: "W/\(current)").status == 412)
        #expect(put(fixture, document, ifMatch: #""x", \#(current)"#).status == 200)
        #expect(put(fixture, "{}", ifMatch: "*").status == 200)
    }

    @Test(arguments: [
        (#"{"dns64Prefix":"64:ff9b::/80"}"#, "dns64Prefix", "line 1, column 16"),
        (
            "{\n  \"hostOverrides\": [\n    {\"hosts\": [\"ok.test\", \"*.*.test\"]}\n  ]\n}", "hostOverrides[0].hosts[1]",
            "line 3, column 27"
        ),
        (#"{"domains":{"mode":"listed"}}"#, "domains.allow", "line 1, column 12"),
        (#"{"maxCacheTTL":5}"#, "maxCacheTTL", "line 1, column 16"),
        (#"{"domains": }"#, "body", "line 1, column 13"),
    ])
    func aBadDocumentIsRefusedNamingTheKeyAndWhereItIs(body: String, key: String, position: String) throws {
        let fixture = ServiceFixture(config: Self.config())
        let etag = try #require(fixture.get("/v1/default/policy").header("ETag"))
        let refused = put(fixture, body, ifMatch: etag)
        #expect(refused.status == 400, "\(refused.text)")
        let message = try #require(refused.errorMessage)
        #expect(message.hasPrefix(key + ":") || message.hasPrefix(key + " "), "\(message)")
        #expect(message.contains(position), "\(message)")
        #expect(fixture.engine.config == Self.config())
        #expect(fixture.accountStore.calls.isEmpty)
    }

    /// A request signed with `secret` (the server's canonicaliser, as ClientAuthenticationTests do).
    private func signed(_ method: String, body: String = "", kid: String, secret: String, expiry: Double) throws -> HTTPRequest {
        let t = String(Int(expiry))
        let canonical = try SignatureV1.canonicalString(
            method: method, path: "/v1/default/policy", arguments: [], expiry: t, body: Array(body.utf8))
        let sign = try SignatureV1.signature(secret: secret, canonical: canonical)
        return HTTPRequest(method: method, path: "/v1/default/policy", query: ["kid": kid, "t": t, "sign": sign], body: Array(body.utf8))
    }

    @Test func theDocumentNeedsAManageKeyAndASignedPutIsAcceptedOnce() throws {
        let fixture = ServiceFixture(config: Self.config(signed: true))
        let now = fixture.clock.now()
        #expect(Exchange(fixture.handle(HTTPRequest(method: "GET", path: "/v1/default/policy"))).status == 401)
        let byResolveKey = Exchange(fixture.handle(try signed("GET", kid: "r1", secret: Self.resolveSecret, expiry: now + 60)))
        #expect(byResolveKey.status == 403 && byResolveKey.errorCode == "Forbidden")
        let got = Exchange(fixture.handle(try signed("GET", kid: "m1", secret: Self.manageSecret, expiry: now + 60)))
        #expect(got.status == 200)
        #expect(!got.text.contains(Self.manageSecret) && !got.text.contains("clientKeys"))
        let etag = try #require(got.header("ETag"))

        let document = #"{"dns64Prefix":"64:ff9b::/96"}"#
        var unsigned = HTTPRequest(method: "PUT", path: "/v1/default/policy", body: Array(document.utf8))
        unsigned.ifMatch = etag
        #expect(Exchange(fixture.handle(unsigned)).status == 401)
        var wrongRole = try signed("PUT", body: document, kid: "r1", secret: Self.resolveSecret, expiry: now + 60)
        wrongRole.ifMatch = etag
        #expect(Exchange(fixture.handle(wrongRole)).status == 403)
        #expect(fixture.engine.config.dns64Prefix == nil)
        var request = try signed("PUT", body: document, kid: "m1", secret: Self.manageSecret, expiry: now + 60)
        request.ifMatch = etag
        let done = Exchange(fixture.handle(request)).awaited()
        #expect(done.status == 200, "\(done.text)")
        #expect(fixture.engine.config.dns64Prefix != nil && fixture.engine.config.clientKeys.count == 2)
        // The same signed request again is a replay.
        let newTag = try #require(done.header("ETag"))
        request.ifMatch = newTag
        #expect(Exchange(fixture.handle(request)).awaited().status == 401)
    }
}
