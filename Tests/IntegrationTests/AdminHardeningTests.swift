import Foundation
import HTTPDNSTestSupport
import Testing

/// Admin hardening against the real binary: the token from a file, audit lines, no secret in
/// any response, label or log line, and no log line forged from a request.
@Suite("Admin hardening")
struct AdminHardeningTests {
    static let token = "integration-admin-token-1234"
    static let bearer = ["Authorization": "Bearer \(token)"]

    @Test func theAdminTokenIsReadFromAFileWithoutItsNewline() async throws {
        let directory = try TestPaths.makeTemporaryDirectory("token-file")
        let file = directory.appendingPathComponent("admin-token").path
        try "\(Self.token)\n".write(toFile: file, atomically: true, encoding: .utf8)
        try await withService(configure: { _, options in options.environment["HTTPDNS_ADMIN_TOKEN_FILE"] = file }) { _, service in
            #expect(try await service.client.get("/v1/accounts", headers: Self.bearer).status == 200)
            expectError(
                try await service.client.get("/v1/accounts", headers: ["Authorization": "Bearer \(Self.token)x"]),
                status: 401, code: "Unauthorized")
            #expect(!service.log().contains(Self.token))
        }
    }

    @Test func anUnreadableTokenFileStopsTheStartNamingTheKey() async throws {
        let (status, output) = try await HTTPDNSDProcess.runOnce(
            arguments: [], environment: ["HTTPDNS_ADMIN_TOKEN_FILE": "/nonexistent/admin-token"])
        #expect(status == 2, "\(output)")
        #expect(output.contains("HTTPDNS_ADMIN_TOKEN_FILE"), "\(output)")
    }

    @Test func everyAdminChangeLeavesOneAuditLineAndNoSecretIsShownAnywhere() async throws {
        let secrets = ["very-secret-value", "another-secret-value", "hunter22-token"]
        try await withService(configure: { _, options in options.adminToken = Self.token }) { servers, service in
            // The first upstream is dead and carries a token in its query: it fails, is logged
            // and counted, under its name without the token.
            let leaky = "json:http://127.0.0.1:\(deadPort())/resolve?token=hunter22-token"
            let account = loopbackAccount(
                servers, upstreams: [leaky, servers.json.upstreamSpec],
                [
                    "accessKeyId": "AKID-visible", "accessKeySecret": "very-secret-value",
                    "secretKey": "another-secret-value", "maxCacheTTL": 600,
                ])
            try LoopbackGuard.checkAccount(id: "tenant1", account)
            var responses: [String] = []
            let put = try await service.client.put("/v1/accounts/tenant1", json: account, headers: Self.bearer)
            #expect(put.status == 201)
            responses.append(put.text)
            let resolved = try await service.client.get("/v1/tenant1/resolve?host=\(TestZone.www)&type=A")
            #expect(resolved.status == 200)
            responses.append(resolved.text)
            responses.append(try await service.client.get("/v1/accounts/tenant1", headers: Self.bearer).text)
            responses.append(try await service.client.get("/v1/accounts", headers: Self.bearer).text)
            responses.append(try await service.client.get("/v1/tenant1/stats").text)
            let metrics = try await service.client.get("/metrics").text
            responses.append(metrics)
            #expect(metrics.contains("upstream=\"json:http://127.0.0.1:"))
            #expect(!metrics.contains("tenant1"), "account ids stay off the public listener's metrics")

            // A refused change (wrong token) and a deletion are audited too.
            #expect(
                try await service.client.delete("/v1/accounts/tenant1", headers: ["Authorization": "Bearer wrong-token-123"]).status == 401)
            #expect(try await service.client.delete("/v1/accounts/tenant1", headers: Self.bearer).status == 200)

            let log = try await waitForLog(service) { $0.contains("result=deleted") }
            let audits = log.split(separator: "\n").filter { $0.contains(" audit: ") }
            print("audit lines:\n" + audits.joined(separator: "\n"))
            #expect(audits.count == 3, "\(audits)")
            #expect(audits.first?.contains("admin PUT /v1/accounts/tenant1 peer=127.0.0.1 result=created changed:") == true)
            #expect(audits.first?.contains("maxCacheTTL -->600") == true)
            #expect(audits.first?.contains(#"accessKeySecret -->"***""#) == true)
            #expect(audits.dropFirst().first?.contains("admin DELETE /v1/accounts/tenant1 peer=127.0.0.1 result=refused 401") == true)
            #expect(audits.last?.contains("admin DELETE /v1/accounts/tenant1 peer=127.0.0.1 result=deleted") == true)
            #expect(log.contains("failed for \(TestZone.www)"), "the dead upstream's failure is logged")
            for secret in secrets {
                #expect(!log.contains(secret), "\(secret) in the log")
                for response in responses { #expect(!response.contains(secret), "\(secret) in a response") }
            }
        }
    }

    @Test func noRequestCanForgeALogLine() async throws {
        try await withService(configure: { _, options in options.adminToken = Self.token }) { _, service in
            // A path with an encoded newline: libmicrohttpd decodes it, and it reaches the audit line.
            let forged = "x%0A2026-12-02T12:00:00Z%20info%20audit:%20forged"
            _ = try await service.client.put("/v1/accounts/\(forged)", json: ["localDNSFallback": false], headers: Self.bearer)
            let log = try await waitForLog(service) { $0.contains("result=refused 400") }
            let lines = log.split(separator: "\n")
            #expect(!lines.contains { $0.hasPrefix("2026-12-02T12:00:00Z") }, "\(log)")
            #expect(lines.contains { $0.contains(#"/v1/accounts/x\n2026-12-02T12:00:00Z info audit: forged"#) }, "\(log)")
        }
    }

    /// The log once `condition` holds (lines are written as the requests finish), at most 5 s.
    private func waitForLog(_ service: HTTPDNSDProcess, _ condition: (String) -> Bool) async throws -> String {
        let deadline = Date().addingTimeInterval(5)
        while !condition(service.log()) && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        return service.log()
    }
}
