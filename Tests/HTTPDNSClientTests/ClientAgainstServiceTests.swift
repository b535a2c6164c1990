import Foundation
import HTTPDNSClient
import HTTPDNSTestSupport
import Testing

/// `HTTPDNSClient` with its real transport against the real httpdnsd on loopback.
@Suite("HTTPDNSClient against httpdnsd")
struct ClientAgainstServiceTests {
    static let badSignature =
        "bad signature: no key of this account made it for this request (signature v1, see docs/security.md)"

    private func configuration(_ services: [URL], secret: String = ClientServiceFixture.secret, fallback: Bool = false)
        -> HTTPDNSClientConfiguration
    {
        HTTPDNSClientConfiguration(
            services: services, account: "shop",
            credentials: HTTPDNSCredentials(keyID: ClientServiceFixture.keyID, secret: secret),
            systemResolverFallback: fallback, requestTimeout: 10)
    }

    @Test func signedResolvesOfOneAndManyNamesAreAnswered() async throws {
        try await ClientServiceFixture.withSignedService { url, _, _ in
            let client = HTTPDNSClient(configuration: configuration([url]))
            let before = Date()
            let answer = try await client.resolve(TestZone.www)
            #expect(answer.source == .service && answer.ipv4.sorted() == TestZone.wwwV4 && answer.ttl > 0, "\(answer)")
            let batch = await client.resolve([TestZone.www, TestZone.v4Only, TestZone.nxdomain()])
            #expect(try batch[0].get().source == .cache)
            #expect(try batch[1].get().ipv4 == TestZone.v4OnlyV4)
            #expect(try batch[2].get().nxdomain)
            // The offset is the service's Date (whole seconds) less the client's clock when the
            // reply came, both within the calls: bounded by how long they took, however long the
            // test's task then waited to run.
            let took = Date().timeIntervalSince(before)
            let offset = await client.serviceClockOffset
            #expect(offset >= -took - 1.01 && offset <= took + 0.01, "offset \(offset) s, calls took \(took) s")
        }
    }

    @Test func aWrongSecretIsRefusedAndNotFailedOver() async throws {
        try await ClientServiceFixture.withSignedService { url, _, _ in
            let client = HTTPDNSClient(configuration: configuration([url, url], secret: "not-the-secret-000000", fallback: true))
            await #expect(throws: HTTPDNSClientError.refused(status: 401, code: "Unauthorized", message: Self.badSignature)) {
                try await client.resolve(TestZone.www)
            }
        }
    }

    @Test func aNameOutsideTheAccountsDomainListIsLeftToTheSystemResolver() async throws {
        // `localhost` is what the system resolver here answers without asking any DNS server.
        try await ClientServiceFixture.withSignedService(["domains": ["mode": "listed", "allow": [.string(TestZone.www)]]]) {
            url, _, _ in
            let client = HTTPDNSClient(configuration: configuration([url], fallback: true))
            #expect(try await client.resolve(TestZone.www).source == .service)
            let local = try await client.resolve("localhost")
            #expect(local.source == .system && !local.addresses.isEmpty, "\(local)")

            let strict = HTTPDNSClient(configuration: configuration([url]))
            await #expect {
                try await strict.resolve(TestZone.v4Only)
            } throws: { error in
                guard case .refused(403, "DomainNotAllowed", _) = error as? HTTPDNSClientError else { return false }
                return true
            }
        }
    }

    @Test func aDeadServiceIsSkippedAndNoServiceFallsBackToTheSystem() async throws {
        try await ClientServiceFixture.withSignedService { url, _, _ in
            let dead = URL(string: "http://127.0.0.1:\(deadPort())")!
            let client = HTTPDNSClient(configuration: configuration([dead, url]))
            #expect(try await client.resolve(TestZone.www).ipv4.sorted() == TestZone.wwwV4)

            let alone = HTTPDNSClient(configuration: configuration([dead], fallback: true))
            let system = try await alone.resolve("localhost")
            #expect(system.source == .system && !system.addresses.isEmpty)
        }
    }
}
