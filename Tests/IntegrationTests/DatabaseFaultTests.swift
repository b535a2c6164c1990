import Foundation
import HTTPDNSTestSupport
import Testing

/// Runs `python3 -c script arguments...` (its sqlite3 module: a second, independent SQLite).
private func python(_ script: String, _ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", script] + arguments
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw HarnessError("python3 \(arguments) failed") }
}

/// Databases the service did not expect: from a newer build, or with a damaged cache table.
@Suite("Database faults")
struct DatabaseFaultTests {
    static let token = "integration-admin-token-1234"
    static let bearer = ["Authorization": "Bearer \(token)"]

    @Test func aDatabaseFromANewerBuildStopsTheStartWithExitCode3AndIsLeftAlone() async throws {
        let directory = try TestPaths.makeTemporaryDirectory("newer-schema")
        let path = directory.appendingPathComponent("newer.sqlite").path
        try python("import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version=99'); c.execute('CREATE TABLE future(x)'); c.commit()", [path])
        let (status, output) = try await HTTPDNSDProcess.runOnce(arguments: [], environment: ["HTTPDNS_DB": path])
        #expect(status == 3, "\(output)")
        #expect(output.contains("written by a newer httpdnsd"), "\(output)")
        #expect(output.contains("schema version 99"), "\(output)")
        try python("import sqlite3,sys; v=sqlite3.connect(sys.argv[1]).execute('PRAGMA user_version').fetchone()[0]; sys.exit(0 if v==99 else 1)", [path])
        let (_, help) = try await HTTPDNSDProcess.runOnce(arguments: ["--help"])
        #expect(help.contains("3 when the database was written by a newer httpdnsd"))
    }

    @Test func aDamagedCacheTableIsSetAsideAtStartKeepingTheAccounts() async throws {
        try await withTestServers { servers in
            var options = servers.options()
            options.adminToken = Self.token
            let database = try await withHTTPDNSD(options) { first in
                let put = try await first.client.put("/v1/accounts/kept", json: loopbackAccount(servers), headers: Self.bearer)
                #expect(put.status == 201, "\(put)")
                for index in 0..<30 {
                    #expect(try await first.client.get("/v1/default/resolve?host=\(TestZone.bulkHost(index))&type=A").status == 200)
                }
                #expect(await first.stop() == 0)
                return first.databasePath
            }
            try python("""
                import sqlite3,sys
                p=sys.argv[1]; c=sqlite3.connect(p)
                r=c.execute("SELECT rootpage FROM sqlite_master WHERE name='cache_entries'").fetchone()[0]
                s=c.execute('PRAGMA page_size').fetchone()[0]; c.close()
                f=open(p,'r+b'); f.seek((r-1)*s); f.write(b'\\xa5'*s); f.close()
                """, [database])

            options.databasePath = database
            try await withHTTPDNSD(options) { second in
                #expect(second.log().contains("was damaged"), "\(second.log())")
                let account = try await second.client.get("/v1/accounts/kept", headers: Self.bearer)
                #expect(account.status == 200, "the account was lost: \(account)")
                let cold = try await second.client.get("/v1/default/cache?host=\(TestZone.bulkHost(3))&type=A")
                #expect(cold.status == 404, "\(cold)")
                let ready = try await second.client.get("/readyz")
                #expect(ready.json["store"]?["healthy"]?.bool == true, "\(ready)")
                let preload = try await second.client.post("/v1/default/preload", json: ["hosts": [.string(TestZone.www)], "type": "A"])
                #expect(preload.json["durable"]?.bool == true, "\(preload)")
            }
            let files = try FileManager.default.contentsOfDirectory(atPath: URL(fileURLWithPath: database).deletingLastPathComponent().path)
            #expect(files.contains { $0.contains(".corrupt-") }, "\(files)")
        }
    }
}
