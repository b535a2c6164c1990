import Foundation
import HTTPDNSTestSupport
import Testing

/// The web console on the operations listener (docs/console.md): its security over a real
/// socket, then the whole console in Debian's headless chromium (`scripts/test/console_browser.py`).
@Suite("Web console")
struct ConsoleTests {
    static let token = "console-test-admin-token"

    /// The service with an operations listener; `body` gets a client of it.
    func withConsole(_ body: (TestServers, HTTPClient, UInt16) async throws -> Void) async throws {
        try await withService(configure: { _, options in
            options.adminToken = Self.token
            options.listen("--ops-listen", port: "ops")
        }) { servers, service in
            let opsPort = try service.port(named: "ops")
            try await body(servers, HTTPClient(port: opsPort), opsPort)
        }
    }

    @Test func signInCSPAndCSRFOverTheSocket() async throws {
        try await withConsole { _, ops, _ in
            let page = try await ops.get("/console/")
            #expect(page.status == 200)
            #expect(page.header("content-type")?.hasPrefix("text/html") == true)
            let policy = page.header("content-security-policy") ?? ""
            #expect(policy.contains("default-src 'self'") && policy.contains("frame-ancestors 'none'") && !policy.contains("unsafe"))
            #expect(!page.text.contains("<script>") && !page.text.contains("style="), "no inline script or style")

            let wrong = try await ops.post("/console/login", json: ["token": "not-the-admin-token"])
            expectError(wrong, status: 401, code: "Unauthorized")
            #expect(wrong.header("set-cookie") == nil)

            let login = try await ops.post("/console/login", json: ["token": .string(Self.token)])
            #expect(login.status == 200)
            let setCookie = try #require(login.header("set-cookie"))
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && !setCookie.contains("Secure"))
            let cookie = String(try #require(setCookie.split(separator: ";").first))
            let csrf = try #require(login.json["csrfToken"]?.string)

            let account: TestJSON = ["maxCacheTTL": 600]
            #expect(try await ops.get("/v1/accounts", headers: ["Cookie": cookie, "X-CSRF-Token": csrf]).status == 200)
            expectError(
                try await ops.put("/v1/accounts/forged", json: account, headers: ["Cookie": cookie]), status: 403, code: "Forbidden")
            expectError(
                try await ops.put(
                    "/v1/accounts/forged", json: account, headers: ["Cookie": cookie, "X-CSRF-Token": String(csrf.reversed())]),
                status: 403, code: "Forbidden")
            expectError(try await ops.delete("/v1/default/cache", headers: ["Cookie": cookie]), status: 403, code: "Forbidden")
            let accounts = try await ops.get("/v1/accounts", headers: ["Cookie": cookie, "X-CSRF-Token": csrf])
            #expect(!accounts.text.contains("forged"))
            let put = try await ops.put("/v1/accounts/made", json: account, headers: ["Cookie": cookie, "X-CSRF-Token": csrf])
            #expect(put.status == 201)

            #expect(try await ops.post("/console/logout", json: [:], headers: ["Cookie": cookie, "X-CSRF-Token": csrf]).status == 200)
            expectError(
                try await ops.get("/v1/accounts", headers: ["Cookie": cookie, "X-CSRF-Token": csrf]), status: 401, code: "Unauthorized")
        }
    }

    @Test func theConsoleInAHeadlessBrowser() async throws {
        try await withConsole { servers, _, opsPort in
            var arguments = [
                TestPaths.packageRoot.appendingPathComponent("scripts/test/console_browser.py").path,
                "--url", "http://127.0.0.1:\(opsPort)", "--token", Self.token,
                "--upstream", servers.dnss.upstreamSpec, "--localdns", servers.unbound.address,
                "--host", TestZone.www,
            ]
            // `make console-screenshots` sets this to refresh the pictures of docs/console.md.
            if let directory = ProcessInfo.processInfo.environment["HTTPDNS_CONSOLE_SCREENSHOTS"] {
                arguments += ["--screenshots", directory]
            }
            // Debian's python3, which has python3-selenium (a python3 earlier on PATH may not).
            let result = try await ExternalTool.run("env", ["/usr/bin/python3"] + arguments, timeout: 90)
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("ok: no error in the page's log"), "\(result.output)")
        }
    }
}
