import Foundation
import HTTPDNSClient
import HTTPDNSTestSupport
import Synchronization
import Testing

/// `HTTPDNSClient` with an encryption key against the real httpdnsd on loopback: accounts
/// `sealed` (`requireEncryption`) and `both` (`requireEncryption` and `requireSignedRequests`).
@Suite("HTTPDNSClient encrypted, against httpdnsd")
struct ClientEncryptionAgainstServiceTests {
    static let plainRefused = "account 'sealed' requires encrypted requests: send enc=... (see docs/encryption.md)"
    static let noAccountKey = "account 'open' has no aesSecretKey: enc cannot be used"
    static let notDecrypted = "enc does not decrypt: changed on the way, or sealed with another key, method or path"

    private func configuration(
        _ services: [URL], account: String, key: String?, credentials: HTTPDNSCredentials? = nil, fallback: Bool = false
    ) throws -> HTTPDNSClientConfiguration {
        HTTPDNSClientConfiguration(
            services: services, account: account, credentials: credentials,
            encryptionKey: try key.map { key throws(HTTPDNSClientError) in try HTTPDNSEncryptionKey(hex: key) },
            systemResolverFallback: fallback, requestTimeout: 10)
    }

    @Test func anEncryptedClientResolvesAndTheSameClientWithoutTheKeyIsRefused() async throws {
        try await ClientServiceFixture.withEncryptedService { url, _, _ in
            let transport = RecordingTransport()
            let client = HTTPDNSClient(
                configuration: try configuration([url], account: "sealed", key: ClientServiceFixture.aesKey), transport: transport)
            let answer = try await client.resolve(TestZone.www)
            #expect(answer.source == .service && answer.ipv4.sorted() == TestZone.wwwV4, "\(answer)")
            let batch = await client.resolve([TestZone.v4Only, TestZone.nxdomain()])
            #expect(try batch[0].get().ipv4 == TestZone.v4OnlyV4)
            #expect(try batch[1].get().nxdomain)
            for (sent, contentType) in transport.exchanges {
                #expect(sent.query?.hasPrefix("enc=") == true && !sent.absoluteString.contains("example"), "\(sent)")
                #expect(contentType == "application/octet-stream")
            }
            #expect(transport.exchanges.count == 2)

            let plain = HTTPDNSClient(configuration: try configuration([url, url], account: "sealed", key: nil, fallback: true))
            await #expect(throws: HTTPDNSClientError.refused(status: 403, code: "Forbidden", message: Self.plainRefused)) {
                try await plain.resolve(TestZone.www)
            }
        }
    }

    @Test func anEncryptedSignedClientResolvesOnAnAccountRequiringBoth() async throws {
        try await ClientServiceFixture.withEncryptedService { url, _, _ in
            let credentials = HTTPDNSCredentials(keyID: ClientServiceFixture.keyID, secret: ClientServiceFixture.secret)
            let client = HTTPDNSClient(
                configuration: try configuration([url], account: "both", key: ClientServiceFixture.aesKey, credentials: credentials))
            #expect(try await client.resolve(TestZone.www).ipv4.sorted() == TestZone.wwwV4)

            let unsigned = HTTPDNSClient(configuration: try configuration([url], account: "both", key: ClientServiceFixture.aesKey))
            await #expect {
                try await unsigned.resolve(TestZone.www)
            } throws: { error in
                guard case .refused(401, "Unauthorized", _) = error as? HTTPDNSClientError else { return false }
                return true
            }
        }
    }

    @Test func aWrongKeyOrAnAccountWithoutAKeyIsRefusedClearlyWithoutNamingEitherKey() async throws {
        try await ClientServiceFixture.withEncryptedService { url, _, _ in
            let wrongKey = String(repeating: "ab", count: 32)
            let client = HTTPDNSClient(
                configuration: try configuration([url, url], account: "sealed", key: wrongKey, fallback: true),
                systemResolver: RefusingSystemResolver())
            await #expect {
                try await client.resolve(TestZone.www)
            } throws: { error in
                let description = "\(error)"
                return error as? HTTPDNSClientError == .refused(status: 401, code: "Unauthorized", message: Self.notDecrypted)
                    && !description.contains(wrongKey) && !description.contains(ClientServiceFixture.aesKey)
            }

            let noKey = HTTPDNSClient(configuration: try configuration([url], account: "open", key: ClientServiceFixture.aesKey))
            await #expect(throws: HTTPDNSClientError.refused(status: 400, code: "InvalidParameter", message: Self.noAccountKey)) {
                try await noKey.resolve(TestZone.www)
            }
        }
    }
}

/// `URLSessionTransport`, recording each URL sent and the content type of its answer.
final class RecordingTransport: HTTPDNSTransport {
    private let inner = URLSessionTransport()
    private let recorded = Mutex<[(URL, String?)]>([])

    var exchanges: [(URL, String?)] { recorded.withLock { $0 } }

    func get(_ url: URL, headers: [String: String], timeout: TimeInterval) async throws -> HTTPDNSTransportResponse {
        let response = try await inner.get(url, headers: headers, timeout: timeout)
        recorded.withLock { $0.append((url, response.headers["content-type"])) }
        return response
    }
}

/// A system resolver a test must not reach.
struct RefusingSystemResolver: HTTPDNSSystemResolver {
    func resolve(_ host: String) async throws -> [String] {
        Issue.record("the system resolver was asked for \(host)")
        throw StubTransport.Failure()
    }
}
