import Foundation
import HTTPDNSTestSupport
import Testing

/// The `countries`, `regions` and `asns` conditions of `rules` against the real binary, with
/// MaxMind DB files written by scripts/test/make_geo_db.pl (libmaxmind-db-writer-perl) for
/// loopback test ranges: 127.0.0.0/24 is CN, CN-ZJ, AS4134; 127.0.1.0/24 is US, US-CA, AS15169.
@Suite("Geo rules")
struct GeoRulesTests {
    static func databases() throws -> URL {
        let directory = try TestPaths.makeTemporaryDirectory("geo")
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/make_geo_db.pl").path
        let run = try CommandRun.run("/usr/bin/perl", [script, directory.path])
        guard run.status == 0 else { throw HarnessError("make_geo_db.pl failed: \(run.text)") }
        return directory
    }

    @Test func countryRegionAndASNConditionsReadTheDatabases() async throws {
        let directory = try Self.databases()
        let name = TestZone.unique("geo")
        try await withService(configure: { servers, options in
            options.arguments += [
                "--geo-database", directory.appendingPathComponent("test-city.mmdb").path,
                "--asn-database", directory.appendingPathComponent("test-asn.mmdb").path,
            ]
            options.config = [
                "accounts": [
                    "default": loopbackAccount(
                        servers,
                        [
                            "rules": [
                                [
                                    "name": "zj-telecom", "hosts": [.string(name)],
                                    "when": ["countries": ["CN"], "regions": ["CN-ZJ"], "asns": [4134]],
                                    "answer": ["ipv4": ["192.0.2.86"]],
                                ],
                                ["name": "us", "hosts": [.string(name)], "when": ["countries": ["us"]], "answer": ["ipv4": ["192.0.2.1"]]],
                            ]
                        ])
                ]
            ]
        }) { _, service in
            let client = service.client
            let zj = try await client.get("/v1/default/resolve?host=\(name)&type=A&client_ip=127.0.0.9")
            #expect(zj.json["ips"]?.strings == ["192.0.2.86"], "\(zj)")
            let us = try await client.get("/default/d?host=\(name)&ip=127.0.1.9")
            #expect(us.json["ips"]?.strings == ["192.0.2.1"], "\(us)")
            // An address the databases do not know: no rule holds.
            let other = try await client.get("/v1/default/resolve?host=\(name)&type=A&client_ip=127.0.2.9")
            #expect(other.json["ips"]?.strings == TestZone.wildV4, "\(other)")
            let explain = try await client.get("/v1/default/policy/explain?host=\(name)&client_ip=127.0.0.9")
            #expect(explain.json["geo"]?["country"]?.string == "CN" && explain.json["geo"]?["asn"]?.int == 4134, "\(explain)")
            #expect(explain.json["geo"]?["regions"]?.strings == ["CN-ZJ"], "\(explain)")
        }
    }

    @Test func aBadDatabaseStopsTheStartNamingItsKey() throws {
        let directory = try TestPaths.makeTemporaryDirectory("geo-bad")
        let bad = directory.appendingPathComponent("bad.mmdb")
        try Data("not a database".utf8).write(to: bad)
        let run = try CommandRun.run(
            TestPaths.httpdnsdBinary,
            ["--geo-database", bad.path, "--listen", "127.0.0.1:0", "--db", directory.appendingPathComponent("x.sqlite").path])
        #expect(run.status == 2, "\(run.text)")
        #expect(run.text.contains("geoDatabase: cannot read the MaxMind database"), "\(run.text)")
    }
}
