import Foundation
import HTTPDNSTestSupport
import HTTPDNSWire
import Testing

/// The query log against the real binary: a hit and a miss of every wire format are logged
/// with their fields and the client masked, an account without the log writes nothing, the
/// manage role reads it, retention deletes old rows and entries survive a restart.
@Suite("Query log")
struct QueryLogIntegrationTests {
    static let token = "integration-admin-token-querylog"

    /// The `entries` of `account`'s log once it holds at least `count` (nil at the deadline).
    static func entries(_ service: HTTPDNSDProcess, account: String = "default", count: Int, query: String = "")
        async throws -> [TestJSON]?
    {
        try await poll(for: 20, every: .milliseconds(200)) { () -> [TestJSON]? in
            let page = try await service.client.get("/v1/\(account)/querylog?limit=100\(query)")
            guard page.status == 200, let entries = page.json["entries"]?.array, entries.count >= count else { return nil }
            return entries
        }
    }

    /// The rows of the query log's file (the API hides expired rows; this counts what is kept).
    static func storedRows(_ databasePath: String) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [databasePath + ".querylog", "SELECT count(*) FROM query_log"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    @Test func aHitAndAMissOfEveryFormatAreLoggedWithTheirFields() async throws {
        let names = (v1: TestZone.unique("qv"), emas: TestZone.unique("qe"), json: TestZone.unique("qj"), dns: TestZone.unique("qd"))
        try await withService(configure: { servers, options in
            options.config = [
                "accounts": [
                    "default": loopbackAccount(servers, ["queryLog": ["enabled": true, "clientPrefixV4": 16]]),
                    "quiet": loopbackAccount(servers),
                ]
            ]
        }) { _, service in
            let client = service.client
            let dns = try DomainListTests.dnsArgument(names.dns, type: 1)
            for _ in 0..<2 {
                #expect(try await client.get("/v1/default/resolve?host=\(names.v1)&type=A").status == 200)
                #expect(try await client.get("/default/d?host=\(names.emas)").status == 200)
                #expect(try await client.get("/resolve?name=\(names.json)&type=A").status == 200)
                #expect(try await client.get("/dns-query?dns=\(dns)").status == 200)
            }
            #expect(try await client.get("/v1/quiet/resolve?host=\(TestZone.unique())&type=A").status == 200)
            let entries = try #require(try await Self.entries(service, count: 8), "the 8 lookups were never logged")
            #expect(entries.count == 8)
            for (host, format) in [(names.v1, "v1"), (names.emas, "emas"), (names.json, "json"), (names.dns, "rfc8484")] {
                // Newest first: the hit, then the miss.
                let logged = entries.filter { $0["host"]?.string == host }
                #expect(logged.map { $0["source"]?.string } == ["cache", "upstream"], "\(host): \(logged)")
                for entry in logged {
                    #expect(entry["format"]?.string == format)
                    #expect(entry["type"]?.string == "A")
                    #expect(entry["client"]?.string == "127.0.0.0/16")
                    #expect(entry["status"]?.int == 200)
                    #expect(entry["rcode"]?.string == (format == "rfc8484" ? "NOERROR" : ""))
                    #expect((entry["duration_us"]?.int ?? -1) >= 0)
                    #expect(entry["request_id"]?.string == "")
                    #expect((entry["time"]?.double ?? 0) > Date().timeIntervalSince1970 - 120)
                }
            }
            // Filters and paging.
            let host = try #require(try await Self.entries(service, count: 2, query: "&host=\(names.v1)"))
            #expect(host.count == 2)
            let first = try await client.get("/v1/default/querylog?limit=3")
            #expect(first.json["entries"]?.array?.count == 3)
            let cursor = try #require(first.json["next_cursor"]?.string)
            let second = try await client.get("/v1/default/querylog?limit=10&cursor=\(cursor)")
            #expect(second.json["entries"]?.array?.count == 5)
            #expect(second.json["next_cursor"] == .null)
            expectError(try await client.get("/v1/default/querylog?status=abc"), status: 400, code: "InvalidParameter")
            // The account without the log wrote nothing.
            let quiet = try await client.get("/v1/quiet/querylog")
            #expect(quiet.status == 200 && quiet.json["entries"]?.array?.isEmpty == true, "\(quiet)")
            let metrics = PrometheusText(try await client.get("/metrics").text)
            #expect(metrics.sum("httpdns_querylog_entries_written_total", [:]) == 8)
            #expect(metrics.sum("httpdns_querylog_entries_dropped_total", [:]) == 0)
        }
    }

    @Test func readingTheLogNeedsTheManageRole() async throws {
        let reader = "querylog-reader-secret-0123456789", manager = "querylog-manager-secret-0123456789"
        try await withService(configure: { servers, options in
            options.config = [
                "accounts": [
                    "default": loopbackAccount(servers),
                    "keyed": loopbackAccount(
                        servers,
                        [
                            "queryLog": ["enabled": true], "requireSignedRequests": true,
                            "clientKeys": [
                                ["id": "r1", "secret": .string(reader), "role": "resolve"],
                                ["id": "m1", "secret": .string(manager), "role": "manage"],
                            ],
                        ]),
                ]
            ]
        }) { _, service in
            func get(_ kid: String, _ secret: String) async throws -> HTTPClientResponse {
                let signed = try ClientRequestSigner.sign(
                    method: "GET", path: "/v1/keyed/querylog", args: [], body: [], secret: secret, t: ClientRequestSigner.expiry(in: 120))
                return try await service.client.get("/v1/keyed/querylog?\(signed.signedQuery(kid: kid))")
            }
            expectError(try await get("r1", reader), status: 403, code: "Forbidden")
            #expect(try await get("m1", manager).status == 200)
            expectError(try await service.client.get("/v1/keyed/querylog"), status: 401, code: "Unauthorized")
        }
    }

    @Test func theOpsListenerShowsEveryAccountsEntriesToTheAdminOnly() async throws {
        let shop = TestZone.unique("qs"), other = TestZone.unique("qo")
        try await withService(configure: { servers, options in
            options.adminToken = Self.token
            options.listen("--ops-listen", port: "ops")
            let logged: [String: TestJSON] = ["queryLog": ["enabled": true]]
            options.config = ["accounts": ["shop": loopbackAccount(servers, logged), "other": loopbackAccount(servers, logged)]]
        }) { _, service in
            let ops = HTTPClient(port: try service.port(named: "ops"))
            let bearer = ["Authorization": "Bearer \(Self.token)"]
            #expect(try await service.client.get("/v1/shop/resolve?host=\(shop)&type=A").status == 200)
            #expect(try await service.client.get("/v1/other/resolve?host=\(other)&type=A").status == 200)
            let entries = try await poll(for: 20, every: .milliseconds(200)) { () -> [TestJSON]? in
                let page = try await ops.get("/v1/querylog?limit=10", headers: bearer)
                guard let entries = page.json["entries"]?.array, entries.count >= 2 else { return nil }
                return entries
            }
            let all = try #require(entries, "the two lookups never reached the log")
            #expect(all.map { "\($0["account"]?.string ?? "") \($0["host"]?.string ?? "")" } == ["other \(other)", "shop \(shop)"])
            let one = try await ops.get("/v1/querylog?account=shop", headers: bearer).json["entries"]?.array ?? []
            #expect(one.map { $0["host"]?.string } == [shop])
            let first = try await ops.get("/v1/querylog?limit=1", headers: bearer)
            let cursor = try #require(first.json["next_cursor"]?.string)
            let next = try await ops.get("/v1/querylog?limit=1&cursor=\(cursor)", headers: bearer).json["entries"]?.array ?? []
            #expect(next.map { $0["host"]?.string } == [shop])
            expectError(
                try await ops.get("/v1/querylog?account=shop&cursor=\(cursor)", headers: bearer), status: 400, code: "InvalidParameter")
            expectError(try await ops.get("/v1/querylog?account=no%20such", headers: bearer), status: 400, code: "InvalidParameter")
            expectError(try await ops.get("/v1/querylog"), status: 401, code: "Unauthorized")
            expectError(try await service.client.get("/v1/querylog", headers: bearer), status: 404, code: "NotFound")
        }
    }

    @Test func retentionDeletesOldRowsAndEntriesSurviveARestart() async throws {
        let short = TestZone.unique("short"), kept = TestZone.unique("kept")
        let database = try await withTestServers { servers in
            var options = servers.options()
            options.config = [
                "accounts": [
                    "default": loopbackAccount(servers, ["queryLog": ["enabled": true]]),
                    "brief": loopbackAccount(servers, ["queryLog": ["enabled": true, "retention": 2]]),
                ]
            ]
            return try await withHTTPDNSD(options) { service in
                #expect(try await service.client.get("/v1/brief/resolve?host=\(short)&type=A").status == 200)
                #expect(try await service.client.get("/v1/default/resolve?host=\(kept)&type=A").status == 200)
                _ = try #require(try await Self.entries(service, count: 1), "never logged")
                // The brief entry is deleted from the file once its 2 s are over.
                let gone = try await poll(for: 20, every: .milliseconds(200)) { () -> Bool? in
                    try Self.storedRows(service.databasePath) == 1 ? true : nil
                }
                #expect(gone == true, "the expired row was never deleted")
                #expect(try await service.client.get("/v1/brief/querylog").json["entries"]?.array?.isEmpty == true)
                #expect(await service.stop() == 0)
                return service.databasePath
            }
        }
        try await withTestServers { servers in
            var options = servers.options()
            options.databasePath = database
            options.config = ["accounts": ["default": loopbackAccount(servers, ["queryLog": ["enabled": true]])]]
            try await withHTTPDNSD(options) { service in
                let entries = try await service.client.get("/v1/default/querylog").json["entries"]?.array ?? []
                #expect(entries.map { $0["host"]?.string } == [kept], "\(entries)")
            }
        }
    }
}
