import Foundation
import HTTPDNSTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The loopback test servers themselves work (so a failing service test points at the service).
@Suite("Test harness")
struct HarnessSelfTests {
    @Test func unboundServesTheTestZoneAndCountsQueries() async throws {
        try await withTestServers { servers in
            let unbound = servers.unbound
            let www = try await unbound.query(TestZone.www)
            #expect(www.rcode == 0)
            #expect(Set(www.addresses) == Set(TestZone.wwwV4))
            let chain = try await unbound.query(TestZone.cnameChain)
            #expect(Set(chain.addresses) == Set(TestZone.wwwV4))
            #expect(try await unbound.query(TestZone.www, type: .aaaa).addresses == TestZone.wwwV6)
            #expect(try await unbound.query(TestZone.nxdomain()).rcode == 3)
            #expect(try await unbound.query(TestZone.refused()).rcode == 5)  // never recurses off the machine
            #expect(try await unbound.query(TestZone.unique()).addresses == TestZone.wildV4)
            #expect(try await unbound.query(TestZone.bulkHost(119)).addresses == [TestZone.bulkV4(119)])
            let before = try await unbound.queryCount()
            _ = try await unbound.query(TestZone.www)
            #expect(try await unbound.queryCount() == before + 1)
            await unbound.stop()
            #expect(!unbound.isRunning)
        }
    }

    @Test func dnssAnswersRFC8484Queries() async throws {
        try await withTestServers { servers in
            let client = HTTPClient(port: servers.dnss.port)
            let response = try await client.get("/dns-query?dns=AAABAAABAAAAAAAAA3d3dwdleGFtcGxlBHRlc3QAAAEAAQ")
            #expect(response.status == 200)
            #expect(response.header("content-type") == "application/dns-message")
            #expect(response.body.count > 12)
        }
    }

    @Test func jsonResponderFollowsCNAMEChainsAndLogsRequests() async throws {
        try await withTestServers { servers in
            let client = HTTPClient(port: servers.json.port)
            let response = try await client.get("/resolve?name=\(TestZone.cnameChain)&type=A")
            #expect(response.status == 200)
            let answer = response.json
            #expect(answer["Status"]?.int == 0)
            let records = answer["Answer"]?.array ?? []
            #expect(records.compactMap { $0["type"]?.int } == [5, 5, 1, 1])
            #expect(records.compactMap { $0["TTL"]?.int }.min() == Int(TestZone.cnameChainTTL))
            let negative = try await client.get("/resolve?name=\(TestZone.nxdomain())&type=AAAA").json
            #expect(negative["Status"]?.int == 3)
            #expect(negative["Authority"]?[0]?["type"]?.int == 6)
            let logged = try await servers.json.requests(for: TestZone.cnameChain)
            #expect(logged.count == 1)
            #expect(logged.first?.query["type"] == "A")
        }
    }

    /// `deadPort()` stays dead while the tests run: a connection to it is refused, and no one
    /// else can bind it for TCP (a port only free when picked could be taken by another server).
    @Test func aDeadPortRefusesConnectionsAndCannotBeTaken() throws {
        let port = deadPort()
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        func onFreshSocket(_ call: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32) -> (result: Int32, error: Int32) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            precondition(fd >= 0, "socket: errno \(errno)")
            defer { close(fd) }
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            return (result, result == 0 ? 0 : errno)
        }
        let connected = onFreshSocket { connect($0, $1, $2) }
        #expect(connected.result == -1 && connected.error == ECONNREFUSED)
        let bound = onFreshSocket { bind($0, $1, $2) }
        #expect(bound.result == -1 && bound.error == EADDRINUSE)
    }

    @Test func stoppedServersAreGone() async throws {
        let servers = try await TestServers.start()
        let listening = TCPSocketTable.listeningSockets(onPort: servers.dnss.port)
        #expect(!listening.isEmpty, "dnss listens on 127.0.0.1:\(servers.dnss.port)")
        await servers.stop()
        await servers.stop()  // idempotent
        #expect(!servers.unbound.isRunning && !servers.dnss.isRunning && !servers.json.isRunning)
        #expect(!TCPSocketTable.anyListens(listening))
    }

    /// A child started from a test's thread can be stopped by SIGTERM: a script's `kill` of its
    /// own background job (docs/clients.md does this) and `ChildProcess.stop()` rely on it.
    @Test func childrenStartWithNoSignalBlocked() async throws {
        let run = try CommandRun.run("/bin/grep", ["^SigBlk:", "/proc/self/status"])
        #expect(run.status == 0)
        #expect(run.text.trimmingCharacters(in: .whitespacesAndNewlines) == "SigBlk:\t0000000000000000")
        let script = "sleep 30 & job=$!; kill \"$job\"; wait \"$job\"; echo \"status $?\""
        let killed = try CommandRun.run("/bin/bash", ["-c", script])
        #expect(killed.text == "status 143\n", "SIGTERM ends a background job: \(killed.text)")
    }
}
