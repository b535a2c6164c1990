import Foundation
import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// The console's sign-in (`ConsoleHandler`), its sessions (`ConsoleSessions`) and the one admin
/// check that takes a session with its CSRF token in place of the bearer token.
@Suite struct ConsoleSessionTests {
    static let token = "console-admin-token"
    static let keySecret = "client-secret-0123456789"

    /// A service whose operations listener is separate (as `opsListen` makes it), with a signed
    /// account `shop`.
    static func fixture(adminToken: String? = token) -> ServiceFixture {
        let fixture = ServiceFixture(adminToken: adminToken, limits: .init(separateOpsListener: true))
        fixture.registry.upsert(
            "shop",
            config: .test {
                $0.clientKeys = [ClientKey(id: "m1", secret: keySecret, role: .manage)]
                $0.requireSignedRequests = true
            })
        return fixture
    }

    static func send(
        _ fixture: ServiceFixture, _ method: String, _ path: String, query: [String: String] = [:], body: String = "",
        session: String? = nil, csrf: String? = nil, authorization: String? = nil, listener: Listener = .ops, tls: Bool = false
    ) -> Exchange {
        var request = HTTPRequest(method: method, path: path, query: query, authorization: authorization, body: Array(body.utf8))
        request.listener = listener
        request.consoleSession = session
        request.csrfToken = csrf
        request.isTLS = tls
        return Exchange(fixture.service.handle(request))
    }

    /// Signs in: the session id (the cookie's value) and the CSRF token.
    static func signIn(_ fixture: ServiceFixture) throws -> (session: String, csrf: String) {
        let exchange = send(fixture, "POST", "/console/login", body: #"{"token":"\#(token)"}"#)
        #expect(exchange.status == 200)
        let cookie = try #require(exchange.header("Set-Cookie"))
        let value = try #require(cookie.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last)
        let csrf = try #require(exchange.object["csrfToken"] as? String)
        return (String(value), csrf)
    }

    @Test func signingInSetsAStrictHttpOnlyCookieAndReturnsACSRFToken() throws {
        let fixture = Self.fixture()
        for tls in [false, true] {
            let exchange = Self.send(fixture, "POST", "/console/login", body: #"{"token":"\#(Self.token)"}"#, tls: tls)
            #expect(exchange.status == 200)
            let cookie = try #require(exchange.header("Set-Cookie"))
            let attributes = Set(cookie.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(cookie.hasPrefix("\(ConsoleSessions.cookieName)="))
            #expect(attributes.isSuperset(of: ["Path=/", "HttpOnly", "SameSite=Strict"]))
            #expect(attributes.contains("Secure") == tls)
            let csrf = try #require(exchange.object["csrfToken"] as? String)
            #expect(csrf.count == 64)
            #expect(!cookie.contains(csrf))
            #expect(!exchange.text.contains(Self.token))
            #expect(exchange.header("Content-Security-Policy")?.contains("default-src 'self'") == true)
        }
    }

    @Test(arguments: [
        (#"{"token":"wrong-token"}"#, 401, "Unauthorized"), (#"{"token":"\#(token)x"}"#, 401, "Unauthorized"),
        (#"{"token":""}"#, 401, "Unauthorized"), ("", 400, "InvalidBody"), (#"{"tok":"x"}"#, 400, "InvalidBody"),
        ("[1]", 400, "InvalidBody"),
    ])
    func aWrongTokenOrBodyOpensNoSession(body: String, status: Int, code: String) {
        let fixture = Self.fixture()
        let exchange = Self.send(fixture, "POST", "/console/login", body: body)
        #expect(exchange.status == status)
        #expect(exchange.errorCode == code)
        #expect(exchange.header("Set-Cookie") == nil)
        #expect(fixture.service.handlers.console.sessions.count == 0)
    }

    @Test func withoutAnAdminTokenSigningInIsForbidden() {
        let fixture = Self.fixture(adminToken: nil)
        let exchange = Self.send(fixture, "POST", "/console/login", body: #"{"token":"anything-at-all"}"#)
        #expect(exchange.status == 403)
        #expect(exchange.header("Set-Cookie") == nil)
    }

    @Test func aSessionWithItsCSRFTokenIsAdminAuthority() throws {
        let fixture = Self.fixture()
        let (session, csrf) = try Self.signIn(fixture)
        #expect(Self.send(fixture, "GET", "/v1/accounts", session: session, csrf: csrf).status == 200)
        let put = Self.send(fixture, "PUT", "/v1/accounts/new-one", body: "{}", session: session, csrf: csrf)
        #expect(put.status == 201, "\(put.text)")
        #expect(fixture.registry.engine("new-one") != nil)
        // The tenant API of a signed account, on the operations listener, without a signature.
        #expect(Self.send(fixture, "GET", "/v1/shop/stats", session: session, csrf: csrf).status == 200)
        #expect(Self.send(fixture, "DELETE", "/v1/shop/cache", session: session, csrf: csrf).status == 200)
        #expect(Self.send(fixture, "GET", "/console/session", session: session).object["csrfToken"] as? String == csrf)
    }

    /// The cookie alone (what a browser sends to a forged request) is refused, whatever the method.
    @Test(arguments: [
        ("GET", "/v1/accounts"), ("PUT", "/v1/accounts/forged"), ("DELETE", "/v1/accounts/default"),
        ("DELETE", "/v1/shop/cache"), ("POST", "/v1/shop/cache/refresh"), ("POST", "/console/logout"),
    ])
    func theCookieWithoutItsCSRFTokenIsRefused(method: String, path: String) throws {
        let fixture = Self.fixture()
        let (session, csrf) = try Self.signIn(fixture)
        for wrong in [nil, "", String(csrf.dropLast()) + "0", ConsoleSessions.randomToken()] as [String?] where wrong != csrf {
            let exchange = Self.send(fixture, method, path, body: "{}", session: session, csrf: wrong)
            #expect(exchange.status == 403, "\(method) \(path) with \(String(describing: wrong))")
            #expect(exchange.errorCode == "Forbidden")
        }
        #expect(fixture.registry.ids.sorted() == ["default", "shop"])
        // The session is still live for the real console.
        #expect(Self.send(fixture, "GET", "/v1/accounts", session: session, csrf: csrf).status == 200)
    }

    @Test func aSessionEndsAfterItsIdleTimeAndAtItsMaximumLifetime() throws {
        let fixture = Self.fixture()
        var (session, csrf) = try Self.signIn(fixture)
        fixture.clock.advance(by: ConsoleSessions.idleLifetime - 1)
        #expect(Self.send(fixture, "GET", "/v1/accounts", session: session, csrf: csrf).status == 200)
        fixture.clock.advance(by: ConsoleSessions.idleLifetime - 1)
        #expect(Self.send(fixture, "GET", "/v1/accounts", session: session, csrf: csrf).status == 200)
        fixture.clock.advance(by: ConsoleSessions.idleLifetime + 1)
        let expired = Self.send(fixture, "GET", "/v1/accounts", session: session, csrf: csrf)
        #expect(expired.status == 401)
        #expect(Self.send(fixture, "GET", "/console/session", session: session).object["signedIn"] as? Bool == false)

        (session, csrf) = try Self.signIn(fixture)
        var used = 0.0
        while used + ConsoleSessions.idleLifetime / 2 < ConsoleSessions.maxLifetime {
            fixture.clock.advance(by: ConsoleSessions.idleLifetime / 2)
            used += ConsoleSessions.idleLifetime / 2
            #expect(Self.send(fixture, "GET", "/v1/accounts", session: session, csrf: csrf).status == 200)
        }
        fixture.clock.advance(by: ConsoleSessions.maxLifetime - used)
        #expect(Self.send(fixture, "GET", "/v1/accounts", session: session, csrf: csrf).status == 401)
    }

    @Test func signingOutEndsTheSession() throws {
        let fixture = Self.fixture()
        let (session, csrf) = try Self.signIn(fixture)
        let out = Self.send(fixture, "POST", "/console/logout", session: session, csrf: csrf)
        #expect(out.status == 200)
        #expect(out.header("Set-Cookie")?.contains("Max-Age=0") == true)
        #expect(Self.send(fixture, "GET", "/v1/accounts", session: session, csrf: csrf).status == 401)
    }

    /// Without a credential the operations listener keeps the tenant API to itself; the public
    /// listener never takes the admin's credentials when an operations listener exists.
    @Test func theTenantAPIOnTheOpsListenerNeedsAdminAuthority() throws {
        let fixture = Self.fixture()
        #expect(Self.send(fixture, "GET", "/v1/default/stats").status == 401)
        #expect(Self.send(fixture, "GET", "/v1/default/stats", authorization: "Bearer \(Self.token)").status == 200)
        let (session, csrf) = try Self.signIn(fixture)
        let onMain = Self.send(fixture, "GET", "/v1/shop/stats", session: session, csrf: csrf, listener: .main)
        #expect(onMain.status == 401)
        let bearerOnMain = Self.send(fixture, "GET", "/v1/shop/stats", authorization: "Bearer \(Self.token)", listener: .main)
        #expect(bearerOnMain.status == 401)
        #expect(Self.send(fixture, "POST", "/console/login", body: #"{"token":"\#(Self.token)"}"#, listener: .main).status == 404)
    }

    @Test func withoutAnOpsListenerTheAdminMayUseASignedAccountOnTheMainListener() throws {
        let fixture = ServiceFixture(adminToken: Self.token)
        fixture.registry.upsert(
            "shop",
            config: .test {
                $0.clientKeys = [ClientKey(id: "m1", secret: Self.keySecret, role: .manage)]
                $0.requireSignedRequests = true
            })
        #expect(Self.send(fixture, "GET", "/v1/shop/stats", listener: .main).status == 401)
        #expect(Self.send(fixture, "GET", "/v1/shop/stats", authorization: "Bearer wrong-token", listener: .main).status == 401)
        #expect(Self.send(fixture, "GET", "/v1/shop/stats", authorization: "Bearer \(Self.token)", listener: .main).status == 200)
    }

    @Test func theConsolePagesCarryAStrictContentSecurityPolicy() {
        let fixture = Self.fixture()
        let files = ["console.js", "console-tryit.js", "console-stats.js", "console-policy.js", "console-pages.js", "console.css"]
        for path in ["/console", "/console/"] + files.map({ "/console/\($0)" }) {
            let exchange = Self.send(fixture, "GET", path)
            #expect(exchange.status == 200, "\(path)")
            let policy = exchange.header("Content-Security-Policy") ?? ""
            #expect(policy.contains("default-src 'self'") && policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"))
            #expect(exchange.header("X-Content-Type-Options") == "nosniff")
        }
        #expect(Self.send(fixture, "GET", "/console").response?.contentType.hasPrefix("text/html") == true)
    }

    /// The compiled-in files are the ones under console/ (`make console-assets` regenerates them).
    @Test func theCompiledInAssetsAreInStepWithTheFiles() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let files: [(String, [UInt8])] = [
            ("index.html", ConsoleAssets.indexHTML), ("console.js", ConsoleAssets.consoleJS),
            ("console-tryit.js", ConsoleAssets.consoleTryItJS), ("console-stats.js", ConsoleAssets.consoleStatsJS),
            ("console-policy.js", ConsoleAssets.consolePolicyJS), ("console-pages.js", ConsoleAssets.consolePagesJS),
            ("console.css", ConsoleAssets.consoleCSS),
        ]
        for (name, bytes) in files {
            let onDisk = try Data(contentsOf: root.appendingPathComponent("console/\(name)"))
            let same = Array(onDisk) == bytes
            #expect(same, "console/\(name) differs from ConsoleAssets.swift: run make console-assets")
        }
        let listed = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("console").path)
        #expect(Set(listed) == Set(files.map(\.0)), "every file under console/ is compiled in")
    }
}
