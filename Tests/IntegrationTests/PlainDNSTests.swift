import Foundation
import HTTPDNSTestSupport
import Testing

/// Plain DNS (`dnsListen`, docs/dns.md) against the real binary, unbound and dnss on loopback,
/// asked by dnspython's UDP and TCP clients (`PlainDNSTestClient`): the same engine, cache and
/// question logic as RFC 8484, truncation over UDP, several queries per TCP connection, and
/// malformed messages dropped.
@Suite("Plain DNS")
struct PlainDNSTests {
    /// `withService` with a plain DNS listener on a free port (UDP and TCP), and its client.
    func withDNSService(
        upstreams: @escaping (TestServers) -> [String] = { [$0.dnss.upstreamSpec] },
        account: (@Sendable (TestServers) -> TestJSON)? = nil,
        _ body: (TestServers, HTTPDNSDProcess, PlainDNSTestClient) async throws -> Void
    ) async throws {
        try await withService(
            upstreams: upstreams,
            configure: { servers, options in
                options.listen("--dns-listen", port: "dns")
                if let account { options.config = ["accounts": ["default": account(servers)]] }
            }
        ) { servers, service in
            let port = try service.port(named: "dns")
            #expect(service.log().contains("plain DNS (UDP and TCP) on 127.0.0.1:\(port) for account default"))
            try await body(servers, service, PlainDNSTestClient(port: port))
        }
    }

    @Test func aAndAAAAComeFromTheEngineAndTheSecondIsACacheHit() async throws {
        try await withDNSService { _, service, dns in
            for tcp in [false, true] {
                let replies = try await dns.ask(["\(TestZone.www)/A", "\(TestZone.www)/AAAA"], tcp: tcp)
                #expect(replies.allSatisfy { $0.rcode == "NOERROR" && $0.id == $0.queryID && !$0.truncated }, "\(replies)")
                #expect(replies[0].answer.map(\.data).sorted() == TestZone.wwwV4, "\(replies)")
                #expect(replies[0].answer.allSatisfy { $0.type == "A" })
                #expect(replies[1].answer.map(\.data) == TestZone.wwwV6, "\(replies)")
            }
            // One upstream request per family; the second of each was a hit.
            let stats = try await service.client.get("/v1/default/stats")
            for type in [1, 28] {
                let record = stats.json.array?.first { $0["domain"]?.string == TestZone.www && $0["type"]?.int == type }
                #expect(record?["requestPDnsNum"]?.int == 1, "\(stats)")
                #expect(record?["cacheDnsNum"]?.int == 1, "\(stats)")
            }
            // The same cache as API v1.
            let v1 = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            #expect(v1.json["source"]?.string == "cache", "\(v1)")
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_dns_queries_total", ["protocol": "udp"]) == 2)
            #expect(metrics.sum("httpdns_dns_queries_total", ["protocol": "tcp"]) == 2)
        }
    }

    @Test func otherTypesAreForwardedAndANXDOMAINPassesThrough() async throws {
        try await withDNSService { _, service, dns in
            let replies = try await dns.ask(["\(TestZone.txtName)/TXT", "\(TestZone.origin)/MX", "\(TestZone.nxdomain())/A"])
            #expect(replies[0].rcode == "NOERROR")
            #expect(replies[0].answer.map(\.data) == [TestZone.txtData], "\(replies)")
            #expect(replies[1].answer.map(\.data) == [TestZone.mxData], "\(replies)")
            #expect(replies[2].rcode == "NXDOMAIN", "\(replies)")
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_dns_message_forwarded_total", ["outcome": "answered"]) == 2)
        }
    }

    @Test func aNameTheDomainListRefusesIsREFUSEDWhateverItsType() async throws {
        try await withDNSService(
            upstreams: { [$0.json.upstreamSpec] },
            account: { servers in
                loopbackAccount(
                    servers, upstreams: [servers.json.upstreamSpec],
                    ["localDNSFallback": false, "domains": ["mode": "listed", "allow": [.string(TestZone.www)]]])
            }
        ) { _, _, dns in
            let replies = try await dns.ask(["\(TestZone.www)/A", "\(TestZone.v4Only)/A", "\(TestZone.txtName)/TXT"])
            #expect(replies[0].rcode == "NOERROR" && replies[0].answer.map(\.data).sorted() == TestZone.wwwV4, "\(replies)")
            #expect(replies[1].rcode == "REFUSED" && replies[1].answer.isEmpty, "\(replies)")
            #expect(replies[2].rcode == "REFUSED", "\(replies)")
        }
    }

    /// 25 AAAA records (about 730 bytes): over UDP without EDNS, TC and no records; the same
    /// over TCP, and over UDP with EDNS 1232, whole.
    @Test func aLargeAnswerIsTruncatedOverUDPAndWholeOverTCP() async throws {
        try await withDNSService { _, service, dns in
            let question = "\(TestZone.bigName)/AAAA"
            let udp = try await dns.ask([question])[0]
            #expect(udp.truncated && udp.answer.isEmpty && udp.rcode == "NOERROR", "\(udp)")
            let tcp = try await dns.ask([question], tcp: true)[0]
            #expect(!tcp.truncated, "\(tcp)")
            #expect(Set(tcp.answer.map(\.data)) == Set(TestZone.bigV6), "\(tcp)")
            let edns = try await dns.ask([question], payload: 1232)[0]
            #expect(!edns.truncated && edns.answer.count == TestZone.bigV6.count, "\(edns)")
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_dns_truncated_total", [:]) == 1)
        }
    }

    @Test func severalQueriesShareOneTCPConnectionAndAMalformedOneIsSkipped() async throws {
        try await withDNSService { _, service, dns in
            let garbage: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF, 0x00]
            let replies = try await dns.ask(
                ["\(TestZone.www)/A", "\(TestZone.txtName)/TXT", "\(TestZone.v6Only)/AAAA", "\(TestZone.www)/A"], tcp: true,
                raw: garbage)
            #expect(replies.count == 4)
            #expect(replies.allSatisfy { $0.rcode == "NOERROR" && $0.id == $0.queryID }, "\(replies)")
            #expect(replies[2].answer.map(\.data) == TestZone.v6OnlyV6)
            // Over UDP too: the garbage is dropped, the query after it answered.
            let udp = try await dns.ask(["\(TestZone.v4Only)/A"], raw: garbage)
            #expect(udp[0].answer.map(\.data) == TestZone.v4OnlyV4, "\(udp)")
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_dns_malformed_total", ["protocol": "tcp"]) == 1)
            #expect(metrics.sum("httpdns_dns_malformed_total", ["protocol": "udp"]) == 1)
            #expect(service.isRunning)
        }
    }

    /// Random datagrams, a TCP stream of random bytes, and one that announces 65535 bytes and
    /// hangs up after ten: the service goes on answering.
    @Test func randomBytesNeverStopTheListener() async throws {
        try await withDNSService { _, service, dns in
            let script = """
                import os, random, socket, sys
                port = int(sys.argv[1])
                random.seed(8484)
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                    for _ in range(300):
                        udp.sendto(os.urandom(random.randint(0, 700)), ("127.0.0.1", port))
                for stream in [os.urandom(5000), b"\\xff\\xff" + os.urandom(10), b"\\x00\\x00" * 20]:
                    with socket.create_connection(("127.0.0.1", port), timeout=5) as tcp:
                        tcp.sendall(stream)
                """
            _ = try CommandRun.run("/usr/bin/python3", ["-c", script, String(dns.port)])
            let replies = try await dns.ask(["\(TestZone.www)/A"]) + dns.ask(["\(TestZone.www)/AAAA"], tcp: true)
            #expect(replies.map(\.rcode) == ["NOERROR", "NOERROR"], "\(replies)")
            #expect(service.isRunning)
            let metrics = try await service.metrics()
            // Not all 300: the kernel drops datagrams of a burst beyond the socket's buffer.
            #expect(metrics.sum("httpdns_dns_malformed_total", ["protocol": "udp"]) > 0)
        }
    }

    /// RFC 7766 §6.2.1.1: queries sent back to back before any reply, more than one connection
    /// keeps in flight (64) and misses among them, all answered on the one connection.
    @Test func aHundredPipelinedQueriesOnOneConnectionAreAllAnswered() async throws {
        try await withDNSService { _, service, dns in
            let names = (0..<100).map { TestZone.bulkHost($0 % TestZone.bulkCount) }
            let replies = try await dns.ask(names.map { "\($0)/A" } + ["\(TestZone.txtName)/TXT"], pipeline: true)
            #expect(replies.count == 101)
            for (index, name) in names.enumerated() {
                #expect(replies[index].answer.map(\.data) == [TestZone.bulkV4(index)], "\(name): \(replies[index])")
            }
            #expect(replies[100].answer.map(\.data) == [TestZone.txtData])
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_dns_queries_total", ["protocol": "tcp"]) == 101)
            #expect(metrics.sum("httpdns_dns_tcp_connections_open", [:]) <= 1)
        }
    }

    /// An `ispEnable` account: the query's Client Subnet is the network the upstream is asked
    /// for; without one, the peer's (127.0.0.0/24).
    @Test func theClientSubnetOrThePeerChoosesTheNetwork() async throws {
        try await withDNSService(
            upstreams: { [$0.json.upstreamSpec] },
            account: { servers in loopbackAccount(servers, upstreams: [servers.json.upstreamSpec], ["ispEnable": true]) }
        ) { servers, _, dns in
            let name = TestZone.unique("ecs")
            for subnet in ["198.51.100.77/24", "198.51.100.5/32"] {
                let reply = try await dns.ask(["\(name)/A"], ecs: subnet)[0]
                #expect(reply.answer.map(\.data) == TestZone.wildV4, "\(reply)")
            }
            _ = try await dns.ask(["\(name)/A"], tcp: true)
            let asked = try await servers.json.requests(for: name).map { $0.query["edns_client_subnet"] }
            #expect(asked == ["198.51.100.0/24", "127.0.0.0/24"])
        }
    }

    @Test func sigtermStopsTheDNSListenerWithTheOthers() async throws {
        try await withTestServers { servers in
            var options = servers.options(upstreams: [servers.dnss.upstreamSpec], localDNSFallback: true)
            options.listen("--dns-listen", port: "dns")
            let service = try await HTTPDNSDProcess.start(options)
            #expect(try await PlainDNSTestClient(port: try service.port(named: "dns")).ask(["\(TestZone.www)/A"])[0].rcode == "NOERROR")
            let status = await service.stop()
            #expect(status == 0, "\(service.log().suffix(2000))")
            #expect(service.log().contains("stopped cleanly"))
        }
    }

    @Test func aBadDNSListenAddressStopsTheStartNamingTheKey() async throws {
        let (status, output) = try await HTTPDNSDProcess.runOnce(arguments: ["--dns-listen", "localhost:53"])
        #expect(status == 2, "\(output)")
        #expect(output.contains("--dns-listen"), "\(output)")
        let (envStatus, envOutput) = try await HTTPDNSDProcess.runOnce(arguments: [], environment: ["HTTPDNS_DNS_LISTEN": "127.0.0.1"])
        #expect(envStatus == 2 && envOutput.contains("HTTPDNS_DNS_LISTEN"), "\(envOutput)")
        let help = try await HTTPDNSDProcess.runOnce(arguments: ["--help"])
        #expect(help.output.contains("--dns-listen") && help.output.contains("--dns-account"), "\(help.output)")
    }
}
