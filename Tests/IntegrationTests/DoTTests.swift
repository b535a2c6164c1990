import Foundation
import HTTPDNSTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// DNS over TLS (`dotListen`, docs/dot.md) against the real binary, unbound, dnss and the JSON
/// upstream on loopback, asked by `kdig +tls` and dnspython (`DoTTestClient`) with a test CA:
/// the account from the TLS server name, the same engine as RFC 8484, pipelined queries answered
/// as they complete, the connection limits and deadlines, TLS 1.2+ only, certificate rotation.
@Suite("DNS over TLS")
struct DoTTests {
    static let domain = "dot.example.test"
    /// A name outside `dotAccountDomain` that the certificate also carries.
    static let otherName = "dns.example.test"

    /// `withService` with HTTPS on the main listener (the harness uses the plain one), a DoT
    /// listener with `dotAccountDomain` `dot.example.test`, and a certificate for
    /// `*.dot.example.test` and `dns.example.test` from a test CA.
    func withDoTService(
        upstreams: @escaping (TestServers) -> [String] = { [$0.dnss.upstreamSpec] },
        accounts: (@Sendable (TestServers) -> [String: TestJSON])? = nil, arguments: [String] = [],
        _ body: (TestServers, HTTPDNSDProcess, DoTTestClient, TestCertificates) async throws -> Void
    ) async throws {
        let certificates = try await TestCertificates.make()
        let (certificate, key) = try await certificates.issue(
            "dot", dnsName: Self.otherName, otherNames: ["*.\(Self.domain)"], serial: "2001")
        try await withService(
            upstreams: upstreams,
            configure: { servers, options in
                options.harnessListen = ("--listen-plain", "HTTPDNS_LISTEN_PLAIN")
                options.listen("--listen", port: "https")
                options.listen("--dot-listen", port: "dot")
                options.arguments += ["--tls-cert", certificate, "--tls-key", key, "--dot-account-domain", Self.domain]
                options.arguments += arguments
                if let accounts { options.config = ["accounts": .object(accounts(servers))] }
            }
        ) { servers, service in
            let port = try service.port(named: "dot")
            #expect(service.log().contains("DNS over TLS on 127.0.0.1:\(port)"), "\(service.log())")
            try await body(servers, service, DoTTestClient(port: port, caPath: certificates.caPath), certificates)
        }
    }

    /// `acme.dot.example.test` is the account `acme` (which may resolve only one name),
    /// `dns.example.test` the account `default`, `nosuch.dot.example.test` an account that does
    /// not exist: REFUSED.
    @Test func kdigsServerNameChoosesTheAccount() async throws {
        try await withDoTService(accounts: { servers in
            [
                "default": loopbackAccount(servers),
                "acme": loopbackAccount(servers, ["domains": ["mode": "listed", "allow": [.string(TestZone.v4Only)]]]),
            ]
        }) { _, service, dot, _ in
            let acme = "acme.\(Self.domain)"
            let refused = try await dot.kdig(TestZone.www, "A", serverName: acme)
            #expect(refused.rcode == "REFUSED" && refused.answers.isEmpty, "\(refused.output)")
            let allowed = try await dot.kdig(TestZone.v4Only, "A", serverName: acme)
            #expect(allowed.rcode == "NOERROR" && allowed.answers == TestZone.v4OnlyV4, "\(allowed.output)")
            let other = try await dot.kdig(TestZone.www, "A", serverName: Self.otherName)
            #expect(other.rcode == "NOERROR" && other.answers.sorted() == TestZone.wwwV4, "\(other.output)")
            let missing = try await dot.kdig(TestZone.www, "A", serverName: "nosuch.\(Self.domain)")
            #expect(missing.rcode == "REFUSED", "\(missing.output)")
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_dns_queries_total", ["protocol": "dot"]) == 4)
            #expect(metrics.sum("httpdns_dot_handshakes_total", [:]) == 4)
            // The account acme asked the upstream for its allowed name only.
            #expect(try await statsRecord(service, account: "acme", domain: TestZone.v4Only)?["requestPDnsNum"]?.int == 1)
            #expect(try await statsRecord(service, account: "acme", domain: TestZone.www) == nil)
        }
    }

    @Test func dnspythonGetsTheEnginesAnswersAndForwardedTypesOnOneConnection() async throws {
        try await withDoTService(arguments: ["--access-log", "true"]) { _, service, dot, _ in
            let replies = try await dot.ask(
                ["\(TestZone.www)/A", "\(TestZone.www)/AAAA", "\(TestZone.txtName)/TXT", "\(TestZone.www)/A"], serverName: Self.otherName)
            #expect(replies.allSatisfy { $0.rcode == "NOERROR" && $0.id == $0.queryID }, "\(replies)")
            #expect(replies[0].answer.map(\.data).sorted() == TestZone.wwwV4, "\(replies)")
            #expect(replies[1].answer.map(\.data) == TestZone.wwwV6, "\(replies)")
            #expect(replies[2].answer.map(\.data) == [TestZone.txtData], "\(replies)")
            #expect(replies[3].answer.map(\.data).sorted() == TestZone.wwwV4, "\(replies)")
            // One upstream request for www/A: the second was a cache hit, the same cache as API v1.
            #expect(try await statsRecord(service, domain: TestZone.www)?["requestPDnsNum"]?.int == 1)
            #expect(try await statsRecord(service, domain: TestZone.www)?["cacheDnsNum"]?.int == 1)
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_dns_message_forwarded_total", ["outcome": "answered"]) == 1)
            #expect(metrics.sum("httpdns_dot_handshakes_total", [:]) == 1)
            // One access-log line per query, protocol dot.
            let lines = try await poll(for: 10) { () -> [Substring]? in
                let lines = service.log().split(separator: "\n").filter { $0.contains("access dot NOERROR") }
                return lines.count == 4 ? lines : nil
            }
            #expect(lines?.allSatisfy { $0.contains("dot") && $0.contains("127.0.0.1") } == true, "\(service.log().suffix(3000))")
        }
    }

    /// RFC 7766 §6.2.1.1 on one TLS connection: a slow miss (the upstream waits 1.5 s) written
    /// first, cache hits after it; every hit's reply arrives before the miss's.
    @Test func pipelinedQueriesAreAnsweredOutOfOrderAsTheyComplete() async throws {
        try await withDoTService(upstreams: { [$0.json.upstreamSpec] }) { servers, _, dot, _ in
            let hits = (0..<24).map { "\(TestZone.bulkHost($0))/A" }
            let warm = try await dot.ask(hits, serverName: Self.otherName, pipeline: true)
            #expect(warm.allSatisfy { $0.rcode == "NOERROR" }, "\(warm)")
            try await servers.json.setDelay(milliseconds: 1500)
            let slow = "\(TestZone.unique("slow"))/A"
            let replies = try await dot.ask([slow] + hits, serverName: Self.otherName, pipeline: true)
            #expect(replies[0].answer.map(\.data) == TestZone.wildV4, "\(replies[0])")
            #expect(replies[0].arrival == hits.count, "the miss was not answered last: \(replies)")
            for (index, reply) in replies.dropFirst().enumerated() {
                #expect(reply.answer.map(\.data) == [TestZone.bulkV4(index)], "\(hits[index]): \(reply)")
            }
        }
    }

    /// A client that completes a query and goes quiet is closed after `connectionTimeout`; one
    /// that connects and never finishes a handshake, after `requestReadTimeout`.
    @Test func idleAndSlowClientsAreCut() async throws {
        try await withDoTService(arguments: ["--connection-timeout", "1", "--request-read-timeout", "1"]) { _, service, dot, _ in
            let closed = try await dot.idleClose("\(TestZone.www)/A", serverName: Self.otherName, wait: 15)
            let after = try #require(closed, "the idle connection was never closed")
            #expect(after >= 0.9 && after < 10, "closed after \(after) s")
            let script = """
                import socket, sys, time
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=15)
                s.sendall(b"\\x16\\x03\\x01")  # the start of a ClientHello, never finished
                started = time.monotonic()
                s.recv(1)
                print(round(time.monotonic() - started, 2))
                """
            let (status, output) = try await ExternalTool.run("python3", ["-c", script, String(dot.port)], timeout: 30)
            let slowAfter = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            #expect(status == 0 && slowAfter >= 0.9 && slowAfter < 10, "\(output)")
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_dot_connections_closed_total", ["reason": "idle"]) >= 1)
            #expect(metrics.sum("httpdns_dot_connections_closed_total", ["reason": "slow"]) >= 1)
        }
    }

    /// A client that writes thousands of queries for a large answer and never reads (its receive
    /// buffer a few kilobytes): once its answers stop moving for `requestReadTimeout`, it is cut.
    @Test func aClientThatNeverReadsItsAnswersIsCut() async throws {
        try await withDoTService(arguments: ["--request-read-timeout", "1"]) { _, service, dot, certificates in
            let script = """
                import socket, ssl, sys, threading, time
                import dns.message
                port, ca, name, qname = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
                raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                raw.connect(("127.0.0.1", port))
                tls = ssl.create_default_context(cafile=ca).wrap_socket(raw, server_hostname=name)
                wire = dns.message.make_query(qname, "AAAA").to_wire()
                framed = len(wire).to_bytes(2, "big") + wire
                def flood():
                    try:
                        tls.sendall(framed * 8000)
                    except OSError:
                        pass
                threading.Thread(target=flood, daemon=True).start()
                print("writing", flush=True)
                time.sleep(30)
                """
            let directory = try TestPaths.makeTemporaryDirectory("dot-unread")
            let client = try await ChildProcess.launch(
                name: "unread", executable: try TestPaths.executable("python3"),
                arguments: ["-c", script, String(dot.port), certificates.caPath, Self.otherName, TestZone.bigName],
                environment: TestPaths.childEnvironment(), logURL: directory.appendingPathComponent("unread.log"))
            defer { Task { await client.kill() } }
            let cut = try await poll(for: 20) { () async throws -> Double? in
                let value = try await service.metrics().sum("httpdns_dot_connections_closed_total", ["reason": "slow"])
                return value >= 1 ? value : nil
            }
            #expect(cut != nil, "\(client.output())")
            #expect(try await service.metrics().sum("httpdns_dot_connections_open", [:]) == 0)
            #expect(try await service.metrics().sum("httpdns_dns_queries_total", ["protocol": "dot"]) > 100)
        }
    }

    /// A client offering TLS 1.1 at most (its own floor lowered so that it offers it at all)
    /// gets no session; the listener counts the failed handshake and goes on serving.
    @Test func aTLS11OnlyClientIsRefused() async throws {
        try await withDoTService { _, service, dot, _ in
            let old = try await dot.handshake(maxVersion: "1.1", serverName: Self.otherName)
            // The listener's protocol_version alert, not a failure of the client's own.
            #expect(old.outcome == "failed" && old.error.lowercased().contains("protocol version"), "\(old)")
            let metrics = try await service.metrics()
            #expect(metrics.sum("httpdns_dot_handshake_failures_total", [:]) == 1)
            #expect(try await dot.ask(["\(TestZone.www)/A"], serverName: Self.otherName)[0].rcode == "NOERROR")
        }
    }

    /// 200 connections from 127.0.0.1 held open (over `perIPConnectionLimit` 16): the rest are
    /// refused, and a client on 127.0.0.2 is answered meanwhile.
    @Test func aConnectionFloodFromOneAddressDoesNotShutOutAnother() async throws {
        try await withDoTService(arguments: ["--per-ip-connection-limit", "16"]) { _, service, dot, _ in
            let script = """
                import socket, sys, time
                held = []
                for _ in range(200):
                    try:
                        held.append(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5))
                    except OSError:
                        pass
                print("flooding", flush=True)
                time.sleep(30)
                """
            let directory = try TestPaths.makeTemporaryDirectory("dot-flood")
            let flood = try await ChildProcess.launch(
                name: "flood", executable: try TestPaths.executable("python3"), arguments: ["-c", script, String(dot.port)],
                environment: TestPaths.childEnvironment(), logURL: directory.appendingPathComponent("flood.log"))
            defer { Task { await flood.kill() } }
            let refused = try await poll(for: 20) { () async throws -> Double? in
                let value = try await service.metrics().sum("httpdns_dot_connections_refused_total", ["reason": "per_address"])
                return value >= 150 ? value : nil
            }
            #expect(refused != nil, "\(flood.output())")
            let replies = try await dot.ask(["\(TestZone.www)/A", "\(TestZone.www)/AAAA"], serverName: Self.otherName, source: "127.0.0.2")
            #expect(replies.map(\.rcode) == ["NOERROR", "NOERROR"], "\(replies)")
            #expect(try await service.metrics().sum("httpdns_dot_connections_open", [:]) <= 17)
        }
    }

    /// New files and SIGHUP: new handshakes get the new certificate.
    @Test func sighupRotatesTheCertificateDoTServes() async throws {
        try await withDoTService { _, service, dot, certificates in
            #expect(try await certificates.servedSerial(port: dot.port) == "2001")
            _ = try await certificates.issue("dot", dnsName: Self.otherName, otherNames: ["*.\(Self.domain)"], serial: "2002")
            service.send(signal: SIGHUP)
            let served = try await poll(for: 20) { () async throws -> String? in
                let serial = try await certificates.servedSerial(port: dot.port)
                return serial == "2002" ? serial : nil
            }
            #expect(served == "2002", "\(service.log().suffix(2000))")
            #expect(try await dot.ask(["\(TestZone.www)/A"], serverName: Self.otherName)[0].rcode == "NOERROR")
        }
    }

    @Test func badDoTSettingsStopTheStartNamingTheKey() async throws {
        let (status, output) = try await HTTPDNSDProcess.runOnce(arguments: ["--dot-listen", "127.0.0.1:8853"])
        #expect(status == 2 && output.contains("dotListen") && output.contains("tlsCert"), "\(output)")
        let (envStatus, envOutput) = try await HTTPDNSDProcess.runOnce(arguments: [], environment: ["HTTPDNS_DOT_LISTEN": "localhost"])
        #expect(envStatus == 2 && envOutput.contains("HTTPDNS_DOT_LISTEN"), "\(envOutput)")
        let (domainStatus, domainOutput) = try await HTTPDNSDProcess.runOnce(arguments: ["--dot-account-domain", "no_dots!"])
        #expect(domainStatus == 2 && domainOutput.contains("--dot-account-domain"), "\(domainOutput)")
        let help = try await HTTPDNSDProcess.runOnce(arguments: ["--help"])
        #expect(help.output.contains("--dot-listen") && help.output.contains("--dot-account-domain"), "\(help.output)")
    }
}
