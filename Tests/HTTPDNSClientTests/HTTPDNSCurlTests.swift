import Foundation
import HTTPDNSClient
import HTTPDNSTestSupport
import Testing

/// `httpdns-curl` against the real httpdnsd and an HTTPS server whose name only httpdnsd's
/// upstream knows: the connection goes to the address while Host, SNI and verification keep
/// the name.
@Suite("httpdns-curl")
struct HTTPDNSCurlTests {
    /// The tool beside the httpdnsd under test (both built by `swift build`).
    static var tool: String {
        URL(fileURLWithPath: TestPaths.httpdnsdBinary).deletingLastPathComponent().appendingPathComponent("httpdns-curl").path
    }

    private func run(_ arguments: [String], in directory: URL) throws -> (status: Int32, log: String, body: String) {
        let output = directory.appendingPathComponent("body-\(UUID().uuidString)")
        let run = try CommandRun.run(Self.tool, ["-o", output.path] + arguments)
        let body = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return (run.status, run.text, body)
    }

    private func signing(_ service: URL) -> [String] {
        [
            "--service", service.absoluteString, "--account", "shop", "--key-id", ClientServiceFixture.keyID,
            "--secret", ClientServiceFixture.secret,
        ]
    }

    @Test func aNameOnlyTheServiceKnowsIsFetchedByIPWithHostSNIAndVerificationOnTheName() async throws {
        try await ClientServiceFixture.withSignedService { service, _, _ in
            let server = try await SNIRecordingServer.start(dnsName: TestZone.shopName, address: "127.0.0.1")
            defer { Task { await server.process.kill() } }
            let url = "https://\(TestZone.shopName):\(server.port)/"
            let directory = try TestPaths.makeTemporaryDirectory("httpdns-curl")

            let fetched = try run(signing(service) + ["--cacert", server.caPath, "-v", url], in: directory)
            #expect(fetched.status == 0, "\(fetched.log)")
            #expect(fetched.body == "host=\(TestZone.shopName):\(server.port)\n")
            #expect(fetched.log.contains("resolved by \(service.absoluteString)"), "\(fetched.log)")
            #expect(fetched.log.contains("127.0.0.1 answered HTTP 200"), "\(fetched.log)")
            #expect(server.serverNames.last == TestZone.shopName, "\(server.process.output())")

            // Verification is on: without the test CA the same fetch fails, and does not move on.
            let unverified = try run(signing(service) + [url], in: directory)
            #expect(unverified.status == 60, "\(unverified.log)")
            #expect(!unverified.log.contains("trying the next address"), "\(unverified.log)")
        }
    }

    /// The upstream rotates the two addresses; httpdnsd keeps the order it cached for the TTL,
    /// so the test learns it first and serves on the second address: the first one is dead.
    @Test func anAddressThatRefusesTheConnectionIsSkippedForTheNext() async throws {
        try await ClientServiceFixture.withSignedService { service, _, _ in
            let client = HTTPDNSClient(
                configuration: HTTPDNSClientConfiguration(
                    services: [service], account: "shop",
                    credentials: HTTPDNSCredentials(keyID: ClientServiceFixture.keyID, secret: ClientServiceFixture.secret),
                    systemResolverFallback: false))
            let order = try await client.resolve(TestZone.shopName).ipv4
            #expect(order.sorted() == TestZone.shopV4)
            let server = try await SNIRecordingServer.start(dnsName: TestZone.shopName, address: order[1])
            defer { Task { await server.process.kill() } }
            let directory = try TestPaths.makeTemporaryDirectory("httpdns-curl")
            let fetched = try run(
                signing(service) + ["--cacert", server.caPath, "-v", "https://\(TestZone.shopName):\(server.port)/"],
                in: directory)
            // Should the fetch fail, whether the server was still running and what it printed.
            let serverState = "server on \(order[1]):\(server.port) running: \(server.process.isRunning)\n\(server.process.output())"
            #expect(fetched.status == 0, "\(fetched.log)\n\(serverState)")
            #expect(fetched.log.contains("\(order[0]) did not accept the connection"), "\(fetched.log)")
            #expect(fetched.log.contains("trying the next address"), "\(fetched.log)")
            #expect(fetched.log.contains("\(order[1]) answered HTTP 200"), "\(fetched.log)")
            #expect(server.serverNames == [TestZone.shopName])
        }
    }

    @Test func withTheServiceDownTheNameFailsClearly() async throws {
        let directory = try TestPaths.makeTemporaryDirectory("httpdns-curl")
        let down = "http://127.0.0.1:\(deadPort())"
        let failed = try run(["--service", down, "https://\(TestZone.shopName)/"], in: directory)
        #expect(failed.status == 6, "\(failed.log)")
        #expect(failed.log.contains("could not resolve \(TestZone.shopName)"), "\(failed.log)")
    }
}
