import HTTPDNSCore
import HTTPDNSWire
import Testing

@testable import HTTPDNSUpstream

/// Whole DNS queries forwarded (`DNSMessageForwarder`, for RFC 8484 questions other than A and
/// AAAA) by both forwarders, against unbound and dnss on loopback.
struct MessageForwardingLiveTests {
    private func forward(_ forwarder: any DNSMessageForwarder, _ name: String, type: UInt16, id: UInt16 = 0x5151) async throws
        -> Result<[UInt8], UpstreamError>
    {
        let query = try DNSQueryWriter.query(name: name, type: type, id: id)
        return await awaitResult { forwarder.forward(query, timeoutMilliseconds: 30_000, completion: $0) }
    }

    /// Both forwarders give the reply as the server wrote it: the records, an NXDOMAIN's SOA;
    /// a REFUSED (a name outside the zone) is a failure, so the chain would move on (c-ares,
    /// having tried every server, reports it as a refused connection).
    private func checkForwarder(_ forwarder: any DNSMessageForwarder) async throws {
        let reply = try DNSReplySummary.parse(try await forward(forwarder, "www.example.test", type: 1).get())
        #expect(reply.rcode == 0)
        #expect(reply.answerCount == 2)
        #expect(reply.questionType == 1)
        let nx = try DNSReplySummary.parse(try await forward(forwarder, "nope.example.test", type: 16).get())
        #expect(nx.rcode == 3)
        #expect(nx.negativeTTL == 45)
        let refused = try await forward(forwarder, "outside.example.com", type: 16)
        #expect(throws: UpstreamError.self) { try refused.get() }
    }

    @Test func theSystemResolverForwardsAQueryAsItIs() async throws {
        try await LoopbackDNSServers.with { servers in
            let resolver = SystemResolver(servers: ["127.0.0.1:\(servers.unboundPort)"])
            defer { resolver.shutdown() }
            try await checkForwarder(resolver)
        }
    }

    @Test func aDoHUpstreamForwardsAQueryAsItIs() async throws {
        try await LoopbackDNSServers.with { servers in
            let loop = CurlEventLoop()
            defer { loop.shutdown() }
            try await checkForwarder(DoHWireClient(url: servers.dohURL, loop: loop))
        }
    }

    @Test func aShutDownSystemResolverFailsAForward() async throws {
        let resolver = SystemResolver(servers: ["127.0.0.1:9"])
        resolver.shutdown()
        let result = try await forward(resolver, "www.example.test", type: 16)
        if case .failure(let error) = result { #expect(error.code == .transport) } else { Issue.record("forwarded after shutdown") }
    }
}
