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
        try python(
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version=99'); c.execute('CREATE TABLE future(x)'); c.commit()",
            [path])
        let (status, output) = try await HTTPDNSDProcess.runOnce(arguments: [], environment: ["HTTPDNS_DB": path])
        #expect(status == 3, "\(output)")
        #expect(output.contains("written by a newer httpdnsd"), "\(output)")
        #expect(output.contains("schema version 99"), "\(output)")
        try python(
            "import sqlite3,sys; v=sqlite3.connect(sys.argv[1]).execute('PRAGMA user_version').fetchone()[0]; sys.exit(0 if v==99 else 1)",
            [path])
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
            try python(
                """
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
                #expect(ready.json["store"]?["damagedFile"]?["atStartUp"]?.bool == false, "\(ready)")
                #expect(try await second.metrics().sum("httpdns_store_damaged_files_total") == 1)
                let preload = try await second.client.post("/v1/default/preload", json: ["hosts": [.string(TestZone.www)], "type": "A"])
                #expect(preload.json["durable"]?.bool == true, "\(preload)")
            }
            let files = try FileManager.default.contentsOfDirectory(atPath: URL(fileURLWithPath: database).deletingLastPathComponent().path)
            #expect(files.contains { $0.contains(".corrupt-") }, "\(files)")
        }
    }
}

/// A database damaged while the service was stopped: the start sets it aside and goes on.
@Suite("Database damaged before the start")
struct DamagedAtStartTests {
    static let token = "integration-admin-token-1234"
    static let bearer = ["Authorization": "Bearer \(token)"]

    /// Python that damages the file `sys.argv[1]` in one of three ways.
    static let damage = [
        "garbage header": "import os,sys; f=open(sys.argv[1],'r+b'); f.write(os.urandom(100)); f.close()",
        "truncated": "import os,sys; os.truncate(sys.argv[1], os.path.getsize(sys.argv[1]) // 3)",
        "zeros": "import os,sys; n=os.path.getsize(sys.argv[1]); open(sys.argv[1],'wb').write(bytes(n))",
    ]

    @Test(arguments: ["garbage header", "truncated", "zeros"])
    func theDamagedFileIsSetAsideAndTheServiceStartsWithTheConfiguredAccounts(kind: String) async throws {
        try await withTestServers { servers in
            var options = servers.options()
            options.adminToken = Self.token
            options.config = ["accounts": ["configured": loopbackAccount(servers)]]
            let database = try await withHTTPDNSD(options) { first in
                let put = try await first.client.put("/v1/accounts/stored", json: loopbackAccount(servers), headers: Self.bearer)
                #expect(put.status == 201, "\(put)")
                #expect(await first.stop() == 0)
                return first.databasePath
            }
            try python(Self.damage[kind]!, [database])
            let damaged = try Data(contentsOf: URL(fileURLWithPath: database))
            let directory = URL(fileURLWithPath: database).deletingLastPathComponent().path
            options.databasePath = database
            try await withHTTPDNSD(options) { second in
                // One line names both paths.
                let line = second.log().split(separator: "\n").first {
                    $0.contains("'\(database)'") && $0.contains("'\(database).corrupt-")
                }
                #expect(line?.contains("is damaged") == true, "\(second.log())")
                let ready = try await second.client.get("/readyz")
                #expect(ready.status == 200, "\(ready)")
                let file = ready.json["store"]?["damagedFile"]
                let name = URL(fileURLWithPath: database).lastPathComponent
                #expect(file?["movedTo"]?.string?.hasPrefix("\(name).corrupt-") == true, "\(ready)")
                #expect(file?["atStartUp"]?.bool == true, "\(ready)")
                #expect(ready.text.contains(directory) == false, "/readyz shows the directory: \(ready)")
                let metrics = try await second.metrics()
                #expect(metrics.sum("httpdns_store_damaged_files_total") == 1)
                #expect(try await second.client.get("/v1/configured/resolve?host=\(TestZone.www)").status == 200)
                // The account only the damaged file held is not loaded; the new file takes new ones.
                #expect(try await second.client.get("/v1/accounts/stored", headers: Self.bearer).status == 404)
                let again = try await second.client.put("/v1/accounts/stored", json: loopbackAccount(servers), headers: Self.bearer)
                #expect(again.status == 201, "\(again)")
            }
            // The damaged file is kept, byte for byte, next to the new one.
            let name = URL(fileURLWithPath: database).lastPathComponent
            let aside = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(name + ".corrupt-") }
            #expect(aside.filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }.count == 1, "\(aside)")
            if let kept = aside.first(where: { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }) {
                #expect(try Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent(kept)) == damaged)
            }
        }
    }
}
