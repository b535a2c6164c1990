import HTTPDNSCore
import Testing

@testable import HTTPDNSUpstream

/// RFC 8484 client against real servers on loopback: dnss in front of unbound.
struct DoHWireClientLiveTests {
    private func resolve(_ client: DoHWireClient, _ host: String, _ family: RecordFamily, subnet: String? = nil) async
        -> Result<UpstreamAnswer, UpstreamError>
    {
        let query = UpstreamQuery(host: HostName(host)!, family: family, timeoutMilliseconds: 30_000, clientSubnet: subnet)
        return await awaitResult { client.resolve(query, completion: $0) }
    }

    @Test func resolvesAddressesCNAMEAndNegativeAnswersThroughDnss() async throws {
        try await LoopbackDNSServers.with { servers in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let client = DoHWireClient(url: servers.dohURL, loop: loop)
            #expect(client.name == "doh:\(servers.dohURL)")

            let a = try await resolve(client, "www.example.test", .a).get()
            #expect(Set(a.addresses) == ["127.0.0.11", "127.0.0.12"])
            #expect((1...300).contains(a.ttl ?? 0))

            let aaaa = try await resolve(client, "www.example.test", .aaaa).get()
            #expect(aaaa.addresses == ["::1"])

            let cname = try await resolve(client, "api.example.test", .a).get()
            #expect(Set(cname.addresses) == ["127.0.0.11", "127.0.0.12"])
            #expect((1...60).contains(cname.ttl ?? 0))

            let nx = try await resolve(client, "nope.example.test", .a).get()
            #expect(nx.nxdomain)
            #expect(nx.addresses.isEmpty)
            #expect((1...45).contains(nx.negativeTTL ?? 0))

            let nodata = try await resolve(client, "v4only.example.test", .aaaa).get()
            #expect(nodata.addresses.isEmpty)
            #expect(!nodata.nxdomain)
            #expect((1...45).contains(nodata.negativeTTL ?? 0))

            let withSubnet = try await resolve(client, "www.example.test", .a, subnet: "198.51.100.0/24").get()
            #expect(Set(withSubnet.addresses) == ["127.0.0.11", "127.0.0.12"])
        }
    }

    @Test func manyConcurrentQueriesAllComplete() async throws {
        try await LoopbackDNSServers.with { servers in
            let loop = CurlEventLoop(maxConnectionsPerHost: 4)
            defer { loop.shutdown() }
            let client = DoHWireClient(url: servers.dohURL, loop: loop)
            let results = await withTaskGroup(of: Bool.self) { group in
                for index in 0..<60 {
                    group.addTask {
                        let host = index % 2 == 0 ? "www.example.test" : "api.example.test"
                        let result = await self.resolve(client, host, .a)
                        return (try? result.get().addresses.count) == 2
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.count == 60)
            #expect(results.allSatisfy { $0 })
        }
    }

    @Test func wrongPathIsNotFoundOrBadRequest() async throws {
        try await LoopbackDNSServers.with { servers in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            let client = DoHWireClient(url: "http://127.0.0.1:\(servers.dnssPort)/no-such-path", loop: loop)
            let result = await resolve(client, "www.example.test", .a)
            guard case .failure(let error) = result else {
                Issue.record("expected an HTTP error, got \(result)")
                return
            }
            #expect([.notFound, .badRequest].contains(error.code))
        }
    }
}
