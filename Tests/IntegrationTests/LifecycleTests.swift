import Foundation
import HTTPDNSTestSupport
import Testing

/// Command line, configuration errors, signals and the warm restart from SQLite.
@Suite("Lifecycle")
struct LifecycleTests {
    @Test func helpPrintsUsageAndExitsZero() async throws {
        let (status, output) = try await HTTPDNSDProcess.runOnce(arguments: ["--help"])
        #expect(status == 0)
        #expect(output.lowercased().contains("usage"))
        #expect(output.contains("--upstreams"))
    }

    @Test func unknownConfigFileKeyExitsWithStatus2NamingTheKey() async throws {
        let directory = try TestPaths.makeTemporaryDirectory("badconfig")
        let path = directory.appendingPathComponent("config.json").path
        try #"{"listen":"127.0.0.1:1","noSuchSetting":true}"#.write(toFile: path, atomically: true, encoding: .utf8)
        let (status, output) = try await HTTPDNSDProcess.runOnce(arguments: ["--config", path])
        #expect(status == 2, "\(output)")
        #expect(output.contains("noSuchSetting"))
    }

    @Test func unknownAccountKeyExitsWithStatus2NamingTheKey() async throws {
        let directory = try TestPaths.makeTemporaryDirectory("badaccount")
        let path = directory.appendingPathComponent("config.json").path
        let config: TestJSON = [
            "accounts": [
                "default": [
                    "upstreams": [.string("doh:http://127.0.0.1:\(deadPort())/dns-query")],
                    "localDNSFallback": false, "cacheTTLForever": 5,
                ]
            ]
        ]
        try config.encoded().write(toFile: path, atomically: true, encoding: .utf8)
        let (status, output) = try await HTTPDNSDProcess.runOnce(arguments: ["--config", path])
        #expect(status == 2, "\(output)")
        #expect(output.contains("cacheTTLForever"))
    }

    @Test func badFlagValueExitsWithStatus2NamingTheFlag() async throws {
        let (status, output) = try await HTTPDNSDProcess.runOnce(arguments: ["--threads", "many"])
        #expect(status == 2, "\(output)")
        #expect(output.contains("--threads"))
    }

    @Test func environmentVariablesConfigureTheDefaultAccount() async throws {
        try await withTestServers { servers in
            var options = servers.options(upstreams: [servers.json.upstreamSpec], localDNSFallback: false)
            options.viaEnvironment = true
            try await withHTTPDNSD(options) { service in
                let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)").json
                #expect(Set(body["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
                #expect(try await servers.json.requests(for: TestZone.www).count == 1)
                #expect(service.log().contains("listening on \(service.address)"))
            }
        }
    }

    /// glibc's malloc arenas are capped at one per HTTP thread (at least 2) unless the operator
    /// chose with `MALLOC_ARENA_MAX` (the cap keeps a large cache's RSS close to what it uses).
    @Test func mallocArenasAreCappedPerHTTPThreadUnlessTheEnvironmentChooses() async throws {
        try await withService(configure: { _, options in options.arguments += ["--threads", "3"] }) { _, service in
            if ProcessInfo.processInfo.environment["ASAN_OPTIONS"] != nil {
                // `make sanitize`: AddressSanitizer's allocator refuses every mallopt, and says so.
                #expect(service.log().contains("warning malloc: mallopt(M_ARENA_MAX, 3) refused"), "\(service.log())")
            } else {
                #expect(service.log().contains("malloc: at most 3 arenas"), "\(service.log())")
            }
        }
        try await withService(configure: { _, options in options.environment["MALLOC_ARENA_MAX"] = "1" }) { _, service in
            #expect(!service.log().contains("malloc: at most"))
        }
    }

    @Test func sigtermStopsGracefullyWithExitStatusZero() async throws {
        try await withService { _, service in
            _ = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)")
            #expect(service.log().contains("httpdnsd listening on \(service.address)"))
            let listening = TCPSocketTable.listeningSockets(onPort: service.port)
            #expect(!listening.isEmpty, "httpdnsd listens on \(service.address)")
            let status = await service.stop()
            #expect(status == 0, "\(service.log().suffix(2000))")
            #expect(!service.exitedBySignal)
            #expect(!TCPSocketTable.anyListens(listening))
        }
    }

    @Test func sigtermLetsARequestInFlightFinish() async throws {
        try await withService(upstreams: { [$0.json.upstreamSpec] }) { servers, service in
            try await servers.json.setDelay(milliseconds: 1500)
            let client = service.client
            let name = TestZone.unique("inflight")
            async let inFlight = client.get("/v1/default/resolve?host=\(name)&type=A")
            var asked = 0
            let deadline = Date().addingTimeInterval(30)  // a hang guard, not a timing assertion
            while asked == 0 && Date() < deadline {  // wait until the upstream query is out
                asked = try await servers.json.requests(for: name).count
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(asked == 1)
            let stopping = Task { await service.stop() }
            let response = try await inFlight
            #expect(response.status == 200, "\(response)")
            #expect(response.json["ips"]?.strings == TestZone.wildV4)
            #expect(await stopping.value == 0)
        }
    }

    @Test func preloadedNamesSurviveSIGKILLAndResolveWithoutUpstreams() async throws {
        let hosts = (0..<40).map { TestZone.bulkHost($0) }
        let database = try await withTestServers { servers in
            try await withHTTPDNSD(servers.options()) { first in
                let preload = try await first.client.post(
                    "/v1/default/preload", json: ["hosts": .array(hosts.map { .string($0) }), "type": "A"])
                #expect(preload.status == 200)
                #expect(preload.json["resolved"]?.int == hosts.count)
                #expect(preload.json["durable"]?.bool == true)
                #expect(preload.json["results"]?.array?.allSatisfy { $0["persisted"]?.bool == true } == true)
                await first.kill()  // no graceful flush: the preload reply promised durability
                #expect(first.exitedBySignal)
                return first.databasePath
            }
        }

        // The DNS servers are gone; the new instance only knows dead ports and may not fall back.
        let options = HTTPDNSDOptions(
            upstreams: ["doh:http://127.0.0.1:\(deadPort())/dns-query"],
            localDNSServers: ["127.0.0.1:\(deadPort())"], localDNSFallback: false,
            databasePath: database)
        try await withHTTPDNSD(options) { second in
            for (index, host) in hosts.enumerated() {
                let response = try await second.client.get("/v1/default/resolve?host=\(host)&type=A")
                #expect(response.status == 200, "\(host): \(response)")
                #expect(response.json["ips"]?.strings == [TestZone.bulkV4(index)], "\(host): \(response)")
                #expect(response.json["source"]?.string == "cache", "\(host): \(response)")
            }
            let unknown = try await second.client.get("/v1/default/resolve?host=\(TestZone.bulkHost(100))&type=A")
            #expect([502, 504].contains(unknown.status))
        }
    }

    @Test func resolvedNamesSurviveAGracefulRestart() async throws {
        let hosts = [TestZone.www, TestZone.v4Only, TestZone.cnameChain]
        let database = try await withTestServers { servers in
            try await withHTTPDNSD(servers.options()) { first in
                for host in hosts {
                    let response = try await first.client.get("/v1/default/resolve?host=\(host)&type=A")
                    #expect(response.status == 200)
                }
                #expect(await first.stop() == 0)
                return first.databasePath
            }
        }
        let options = HTTPDNSDOptions(
            upstreams: ["doh:http://127.0.0.1:\(deadPort())/dns-query"],
            localDNSServers: ["127.0.0.1:\(deadPort())"], localDNSFallback: false,
            databasePath: database)
        try await withHTTPDNSD(options) { second in
            for host in hosts {
                let response = try await second.client.get("/v1/default/resolve?host=\(host)&type=A")
                #expect(response.status == 200, "\(host): \(response)")
                #expect(response.json["source"]?.string == "cache", "\(host): \(response)")
            }
            let cached = try await second.client.get("/v1/default/cache?host=\(TestZone.cnameChain)&type=A").json
            #expect(cached["origin_ttl"]?.int == Int(TestZone.cnameChainTTL))
        }
    }
}
