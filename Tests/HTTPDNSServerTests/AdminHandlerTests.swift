import Foundation
import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSTestSupport
import Testing

/// The admin API: `/v1/accounts[/{id}]` behind a bearer token.
@Suite struct AdminHandlerTests {
    static let token = "s3cr3t-admin"
    static let bearer = "Bearer \(token)"
    /// An account body that can only reach loopback.
    static let accountBody =
        #"{"upstreams":["doh:http://127.0.0.1:8053/dns-query"],"localDNSFallback":false,"localDNSServers":["127.0.0.1:5353"],"ipv6Enable":true,"maxCacheTTL":120,"accessKeyId":"AK-1","accessKeySecret":"very-secret-1","secretKey":"sign-key-1"}"#

    static let adminRequests: [(String, String)] = [
        ("GET", "/v1/accounts"), ("GET", "/v1/accounts/default"), ("PUT", "/v1/accounts/shop"), ("DELETE", "/v1/accounts/default"),
        ("POST", "/v1/accounts"),
    ]

    @Test(arguments: adminRequests)
    func withoutAConfiguredTokenEveryAdminPathIs403(method: String, path: String) {
        let fixture = ServiceFixture(adminToken: nil)
        for authorization in [nil, "Bearer ", "Bearer anything"] {
            let exchange = fixture.send(method, path, authorization: authorization, body: Array(Self.accountBody.utf8))
            #expect(exchange.status == 403)
            #expect(exchange.errorCode == "Forbidden")
        }
        #expect(fixture.registry.ids == ["default"])
        #expect(fixture.accountStore.calls.isEmpty)
    }

    @Test(arguments: adminRequests)
    func aMissingOrWrongBearerIs401WithWWWAuthenticate(method: String, path: String) {
        let fixture = ServiceFixture(adminToken: Self.token)
        for authorization in [
            nil, "", "Bearer", "Bearer ", "Bearer wrong", "Bearer \(Self.token)x", "Bearer \(Self.token.dropLast())",
            "Basic \(Self.token)", Self.token, "Bearer  \(Self.token)",
        ] as [String?] {
            let exchange = fixture.send(method, path, authorization: authorization, body: Array(Self.accountBody.utf8))
            #expect(exchange.status == 401, "authorization \(String(describing: authorization))")
            #expect(exchange.errorCode == "Unauthorized")
            #expect(exchange.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
        }
        #expect(fixture.registry.ids == ["default"])
        #expect(fixture.accountStore.calls.isEmpty)
    }

    /// A bad value, `null`, a key given twice or a body that does not parse: a 400 naming the
    /// key (or the line and column), and nothing stored.
    @Test(arguments: [
        (#"{"localDNSServers":["not-an-address"]}"#, "InvalidParameter", "localDNSServers[0]"),
        (#"{"upstreams":["doh:http://a b/x"]}"#, "InvalidParameter", "upstreams[0]"),
        (#"{"ispEnable":null}"#, "InvalidParameter", "ispEnable: is null"),
        (#"{"maxCacheTTL":60,"maxCacheTTL":90}"#, "InvalidBody", "maxCacheTTL: is given twice"),
        ("{\"maxCacheTTL\":60,\n\"timeout\" 1}", "InvalidBody", "line 2, column 11"),
    ])
    func aBadBodyIsRefusedNamingTheKeyAndChangesNothing(body: String, code: String, named: String) throws {
        let fixture = ServiceFixture(adminToken: Self.token)
        let exchange = fixture.send("PUT", "/v1/accounts/shop", authorization: Self.bearer, body: Array(body.utf8))
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == code)
        let message = try #require((exchange.object["error"] as? [String: Any])?["message"] as? String)
        #expect(message.contains(named), "\(message)")
        #expect(fixture.registry.ids == ["default"])
        #expect(fixture.accountStore.calls.isEmpty)
    }

    @Test func putCreatesWith201ThenUpdatesWith200() throws {
        let fixture = ServiceFixture(adminToken: Self.token)
        let created = fixture.send("PUT", "/v1/accounts/shop", authorization: Self.bearer, body: Array(Self.accountBody.utf8))
        #expect(created.status == 201)
        #expect(created.object["id"] as? String == "shop")
        let config = try #require(created.object["config"] as? [String: Any])
        #expect(strings(config["upstreams"]) == ["doh:http://127.0.0.1:8053/dns-query"])
        #expect(number(config["maxCacheTTL"]) == 120)
        #expect(fixture.registry.engine("shop")?.config.ipv6Enable == true)

        let updated = fixture.send(
            "PUT", "/v1/accounts/shop", authorization: Self.bearer,
            body: Array(Self.accountBody.replacingOccurrences(of: "\"maxCacheTTL\":120", with: "\"maxCacheTTL\":90").utf8))
        #expect(updated.status == 200)
        #expect(number((updated.object["config"] as? [String: Any])?["maxCacheTTL"]) == 90)
        #expect(fixture.registry.engine("shop")?.config.maxCacheTTL == 90)
        #expect(fixture.registry.ids == ["default", "shop"])
    }

    @Test func anUpdateKeepsTheCacheWarmAndAppliesAtOnce() {
        let fixture = ServiceFixture(adminToken: Self.token)
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.1"]))])
        fixture.upstream.setAnswer("www.example.test", .aaaa, addresses: ["::1"], ttl: 60)
        #expect(fixture.send("PUT", "/v1/accounts/default", authorization: Self.bearer, body: Array(Self.accountBody.utf8)).status == 200)
        let exchange = fixture.get("/v1/default/resolve", ["host": "www.example.test"])
        #expect(strings(exchange.object["ips"]) == ["127.0.0.1"])
        #expect(strings(exchange.object["ipsv6"]) == ["::1"], "ipv6Enable from the update did not apply to type=auto")
        #expect(fixture.upstream.calls("www.example.test", .a) == 0)
    }

    @Test func secretsAreRedactedInEveryResponseButStoredInFull() throws {
        let fixture = ServiceFixture(adminToken: Self.token)
        let put = fixture.send("PUT", "/v1/accounts/shop", authorization: Self.bearer, body: Array(Self.accountBody.utf8))
        let get = fixture.get("/v1/accounts/shop", authorization: Self.bearer)
        let list = fixture.get("/v1/accounts", authorization: Self.bearer)
        #expect(get.status == 200)
        #expect(list.status == 200)
        for exchange in [put, get, list] {
            #expect(!exchange.text.contains("very-secret-1"))
            #expect(!exchange.text.contains("sign-key-1"))
        }
        let config = try #require(get.object["config"] as? [String: Any])
        #expect(config["accessKeySecret"] as? String == "***")
        #expect(config["secretKey"] as? String == "***")
        #expect(config["accessKeyId"] as? String == "AK-1")
        let accounts = try #require(list.object["accounts"] as? [[String: Any]])
        #expect(accounts.map { $0["id"] as? String } == ["default", "shop"])
        let listed = try #require(accounts.last?["config"] as? [String: Any])
        #expect(listed["accessKeySecret"] as? String == "***")
        #expect(listed["secretKey"] as? String == "***")
        // The store is the service's own: it keeps the real secrets so a restart can sign.
        let saved = try #require(fixture.accountStore.calls.last?.json)
        #expect(saved.contains("very-secret-1"))
        #expect(saved.contains("sign-key-1"))
    }

    @Test func theBearerSchemeNameIsCaseInsensitive() {
        let fixture = ServiceFixture(adminToken: Self.token)
        for scheme in ["bearer", "BEARER", "Bearer"] {
            #expect(fixture.send("GET", "/v1/accounts", authorization: "\(scheme) \(Self.token)").status == 200)
        }
    }

    @Test func aConfigReadBackWithRedactedSecretsKeepsTheStoredSecrets() throws {
        let fixture = ServiceFixture(adminToken: Self.token)
        #expect(fixture.send("PUT", "/v1/accounts/shop", authorization: Self.bearer, body: Array(Self.accountBody.utf8)).status == 201)
        let readBack = fixture.send("GET", "/v1/accounts/shop", authorization: Self.bearer)
        let config = try #require(readBack.object["config"] as? [String: Any])
        #expect(config["accessKeySecret"] as? String == "***")
        let body = try JSONSerialization.data(withJSONObject: config)
        #expect(fixture.send("PUT", "/v1/accounts/shop", authorization: Self.bearer, body: Array(body)).status == 200)
        #expect(fixture.registry.engine("shop")?.config.accessKeySecret == "very-secret-1")
        #expect(fixture.registry.engine("shop")?.config.secretKey == "sign-key-1")
    }

    @Test func aRedactedSecretForAnAccountWithoutOneIs400() {
        let fixture = ServiceFixture(adminToken: Self.token)
        let body =
            #"{"upstreams":["doh:http://127.0.0.1:8053/dns-query"],"localDNSFallback":false,"accessKeyId":"AK","accessKeySecret":"***"}"#
        let exchange = fixture.send("PUT", "/v1/accounts/fresh", authorization: Self.bearer, body: Array(body.utf8))
        #expect(exchange.status == 400)
        #expect(fixture.registry.engine("fresh") == nil)
        #expect(fixture.accountStore.calls.isEmpty)
    }

    @Test func getOfAnUnknownAccountIs404() {
        let fixture = ServiceFixture(adminToken: Self.token)
        let exchange = fixture.get("/v1/accounts/nobody", authorization: Self.bearer)
        #expect(exchange.status == 404)
        #expect(exchange.errorCode == "UnknownAccount")
    }

    @Test func putWithAnUnknownKeyIs400NamingItAndChangesNothing() throws {
        let fixture = ServiceFixture(adminToken: Self.token)
        let before = fixture.engine.config
        let body = #"{"upstreams":["doh:http://127.0.0.1:8053/dns-query"],"localDNSFallback":false,"maxCacheTTL":5,"cacheTTLMax":7}"#
        let update = fixture.send("PUT", "/v1/accounts/default", authorization: Self.bearer, body: Array(body.utf8))
        #expect(update.status == 400)
        #expect(update.errorCode == "InvalidParameter")
        #expect(update.errorMessage?.contains("cacheTTLMax") == true)
        #expect(fixture.engine.config == before)
        let create = fixture.send("PUT", "/v1/accounts/shop", authorization: Self.bearer, body: Array(body.utf8))
        #expect(create.status == 400)
        #expect(create.errorMessage?.contains("cacheTTLMax") == true)
        #expect(fixture.registry.engine("shop") == nil)
        #expect(fixture.accountStore.calls.isEmpty)
    }

    @Test(arguments: [
        (#"{"maxCacheTTL":"long"}"#, "InvalidParameter"),
        (#"{"upstreams":["gopher://127.0.0.1"]}"#, "InvalidParameter"),
        (#"{"timeout":0}"#, "InvalidParameter"),
        (#"{"upstreams":[]"#, "InvalidBody"),
        (#"["upstreams"]"#, "InvalidBody"),
    ])
    func putWithAnInvalidBodyIs400(body: String, code: String) {
        let fixture = ServiceFixture(adminToken: Self.token)
        let exchange = fixture.send("PUT", "/v1/accounts/shop", authorization: Self.bearer, body: Array(body.utf8))
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == code)
        #expect(fixture.registry.engine("shop") == nil)
    }

    @Test(arguments: ["accounts", "bad id", "dots.are.not.ok", String(repeating: "x", count: 65)])
    func putWithAnInvalidAccountIDIs400(id: String) {
        let fixture = ServiceFixture(adminToken: Self.token)
        let exchange = fixture.send("PUT", "/v1/accounts/\(id)", authorization: Self.bearer, body: Array(Self.accountBody.utf8))
        #expect(exchange.status == 400)
        #expect(exchange.errorCode == "InvalidParameter")
        #expect(fixture.registry.ids == ["default"])
    }

    @Test func deleteAnswers200ThenTheAccountIs404Everywhere() {
        let fixture = ServiceFixture(adminToken: Self.token)
        #expect(fixture.send("PUT", "/v1/accounts/shop", authorization: Self.bearer, body: Array(Self.accountBody.utf8)).status == 201)
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.1"]))], account: "shop")
        let shopEngine = fixture.registry.engine("shop")
        let deleted = fixture.send("DELETE", "/v1/accounts/shop", authorization: Self.bearer)
        #expect(deleted.status == 200)
        #expect(deleted.object["deleted"] as? String == "shop")
        #expect(shopEngine?.cacheCount == 0)
        let again = fixture.send("DELETE", "/v1/accounts/shop", authorization: Self.bearer)
        #expect(again.status == 404)
        #expect(again.errorCode == "UnknownAccount")
        #expect(fixture.get("/v1/accounts/shop", authorization: Self.bearer).status == 404)
        #expect(fixture.get("/v1/shop/resolve", ["host": "www.example.test"]).errorCode == "UnknownAccount")
        #expect(fixture.accountStore.calls.map(\.kind) == [.save, .delete])
    }

    @Test func aDeletedAccountCanBeCreatedAgainWithAnEmptyCache() {
        let fixture = ServiceFixture(adminToken: Self.token)
        fixture.seed([("www.example.test", .a, fixture.entry(["127.0.0.1"]))])
        #expect(fixture.send("DELETE", "/v1/accounts/default", authorization: Self.bearer).status == 200)
        let created = fixture.send("PUT", "/v1/accounts/default", authorization: Self.bearer, body: Array(Self.accountBody.utf8))
        #expect(created.status == 201)
        #expect(fixture.get("/v1/default/cache", ["host": "www.example.test"]).status == 404)
    }

    @Test func theChangeIsSavedBeforeItTakesEffectAndBeforeTheReply() throws {
        let fixture = ServiceFixture(adminToken: Self.token)
        let before = fixture.engine.config
        let create = fixture.send("PUT", "/v1/accounts/shop", authorization: Self.bearer, body: Array(Self.accountBody.utf8))
        #expect(create.status == 201)
        let update = fixture.send("PUT", "/v1/accounts/default", authorization: Self.bearer, body: Array(Self.accountBody.utf8))
        #expect(update.status == 200)
        let calls = fixture.accountStore.calls
        try #require(calls.count == 2)
        #expect(calls[0].kind == .save && calls[0].id == "shop")
        #expect(calls[0].configInRegistry == nil, "the account existed before it was saved")
        #expect(calls[1].kind == .save && calls[1].id == "default")
        #expect(calls[1].configInRegistry == before, "the update took effect before it was saved")
        let saved = try #require(calls[0].json.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(number(saved["maxCacheTTL"]) == 120)
        #expect(strings(saved["upstreams"]) == ["doh:http://127.0.0.1:8053/dns-query"])
    }

    @Test func theHTTPThreadIsReleasedWhileTheStoreWritesAndTheReplyFollowsTheWrite() throws {
        let fixture = ServiceFixture(adminToken: Self.token)
        fixture.accountStore.setHolding(true)
        var request = HTTPRequest(method: "PUT", path: "/v1/accounts/shop", authorization: Self.bearer, body: Array(Self.accountBody.utf8))
        request.listener = .main
        guard case .deferred(let start) = fixture.handle(request) else {
            Issue.record("the admin PUT answered before its write was durable")
            return
        }
        let box = ResponseBox()
        start { box.append($0) }
        #expect(box.count == 0)
        #expect(fixture.registry.engine("shop") == nil, "the account took effect before it was saved")
        #expect(fixture.accountStore.releaseHeld() == 1)
        #expect(box.first?.status == 201)
        #expect(fixture.registry.engine("shop") != nil)

        let delete = HTTPRequest(method: "DELETE", path: "/v1/accounts/shop", authorization: Self.bearer)
        guard case .deferred(let startDelete) = fixture.handle(delete) else {
            Issue.record("the admin DELETE answered before its write was durable")
            return
        }
        let deleted = ResponseBox()
        startDelete { deleted.append($0) }
        #expect(fixture.registry.engine("shop") != nil)
        fixture.accountStore.releaseHeld()
        #expect(deleted.first?.status == 200)
        #expect(fixture.registry.engine("shop") == nil)
    }

    @Test func aFailedSaveIs503StoreUnavailableWithRetryAfterAndTheAccountIsNotChanged() {
        let fixture = ServiceFixture(adminToken: Self.token)
        fixture.accountStore.setFailing(true)
        let before = fixture.engine.config
        let create = fixture.send("PUT", "/v1/accounts/shop", authorization: Self.bearer, body: Array(Self.accountBody.utf8))
        #expect(create.status == 503)
        #expect(create.errorCode == "StoreUnavailable")
        #expect(create.header("Retry-After") == "4")
        #expect(create.text.contains("full (SQLite result code 13)"))
        #expect(fixture.registry.engine("shop") == nil)
        let update = fixture.send("PUT", "/v1/accounts/default", authorization: Self.bearer, body: Array(Self.accountBody.utf8))
        #expect(update.status == 503)
        #expect(fixture.engine.config == before)
        let delete = fixture.send("DELETE", "/v1/accounts/default", authorization: Self.bearer)
        #expect(delete.status == 503)
        #expect(delete.errorCode == "StoreUnavailable")
        #expect(fixture.registry.engine("default") != nil)
    }
}

/// The admin API and `aesSecretKey`: redacted in every answer, kept when sent back as "***".
@Suite struct AdminEncryptionKeyTests {
    static let key = String(repeating: "5a", count: 32)
    static let body =
        #"{"upstreams":["doh:http://127.0.0.1:8053/dns-query"],"localDNSFallback":false,"aesSecretKey":"\#(key)","requireEncryption":true}"#

    @Test func theKeyIsRedactedAndARedactedKeySentBackKeepsTheStoredOne() throws {
        let fixture = ServiceFixture(adminToken: AdminHandlerTests.token)
        let put = fixture.send("PUT", "/v1/accounts/shop", authorization: AdminHandlerTests.bearer, body: Array(Self.body.utf8))
        #expect(put.status == 201)
        let get = fixture.get("/v1/accounts/shop", authorization: AdminHandlerTests.bearer)
        for exchange in [put, get, fixture.get("/v1/accounts", authorization: AdminHandlerTests.bearer)] {
            #expect(!exchange.text.contains(Self.key))
        }
        let config = try #require(get.object["config"] as? [String: Any])
        #expect(config["aesSecretKey"] as? String == "***")
        let again = fixture.send(
            "PUT", "/v1/accounts/shop", authorization: AdminHandlerTests.bearer,
            body: Array(try JSONSerialization.data(withJSONObject: config)))
        #expect(again.status == 200)
        #expect(fixture.registry.engine("shop")?.config.aesSecretKey == Self.key)
        #expect(fixture.registry.engine("shop")?.config.requireEncryption == true)
    }

    @Test func aRedactedKeyForAnAccountWithoutOneIs400AndChangesNothing() {
        let fixture = ServiceFixture(adminToken: AdminHandlerTests.token)
        let body = Self.body.replacingOccurrences(of: Self.key, with: "***")
        let exchange = fixture.send("PUT", "/v1/accounts/fresh", authorization: AdminHandlerTests.bearer, body: Array(body.utf8))
        #expect(exchange.status == 400)
        #expect(exchange.text.contains("aesSecretKey"))
        #expect(fixture.registry.engine("fresh") == nil)
        #expect(fixture.accountStore.calls.isEmpty)
    }

    @Test func aMalformedKeyIs400WithoutEchoingIt() {
        let fixture = ServiceFixture(adminToken: AdminHandlerTests.token)
        let body = Self.body.replacingOccurrences(of: Self.key, with: "not-a-key-but-a-secret")
        let exchange = fixture.send("PUT", "/v1/accounts/fresh", authorization: AdminHandlerTests.bearer, body: Array(body.utf8))
        #expect(exchange.status == 400)
        #expect(!exchange.text.contains("not-a-key-but-a-secret"))
        #expect(fixture.registry.engine("fresh") == nil)
    }
}
