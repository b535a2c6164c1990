import Foundation
import HTTPDNSTestSupport
import Testing

/// The real httpdnsd on loopback for the client's tests: the test zone behind dnss and
/// unbound, and account `shop` requiring signatures with the `resolve` key `k1`.
enum ClientServiceFixture {
    static let adminToken = "client-tests-admin-token-1234"
    static let keyID = "k1"
    static let secret = "client-tests-secret-0123456789"
    /// The `aesSecretKey` of the encrypted accounts.
    static let aesKey = "6f1c2b3a495867768594a3b2c1d0efe0f1e2d3c4b5a69788796a5b4c3d2e1f00"

    /// Runs `body` with the service's base URL, account `shop` having `extra` keys too; afterwards
    /// the secret must not be in its log.
    static func withSignedService(
        _ extra: [String: TestJSON] = [:], _ body: (URL, TestServers, HTTPDNSDProcess) async throws -> Void
    ) async throws {
        try await withService(["shop": extra.merging(["requireSignedRequests": true]) { $1 }], body)
    }

    /// Runs `body` with a service that has account `sealed` (`requireEncryption`) and account
    /// `both` (`requireEncryption` and `requireSignedRequests`), both with `aesKey`, and
    /// account `open` without an `aesSecretKey`.
    static func withEncryptedService(_ body: (URL, TestServers, HTTPDNSDProcess) async throws -> Void) async throws {
        let encrypted: [String: TestJSON] = ["aesSecretKey": .string(aesKey), "requireEncryption": true]
        try await withService(
            ["sealed": encrypted, "both": encrypted.merging(["requireSignedRequests": true]) { $1 }, "open": [:]], body)
    }

    /// Runs `body` with the service's base URL after creating each of `accounts` (its own keys
    /// over the loopback upstreams and the key `k1`); afterwards neither the client secret nor
    /// the AES key may be in the service's log.
    private static func withService(
        _ accounts: [String: [String: TestJSON]], _ body: (URL, TestServers, HTTPDNSDProcess) async throws -> Void
    ) async throws {
        try await withTestServers { servers in
            var options = servers.options()
            options.adminToken = adminToken
            try await withHTTPDNSD(options) { service in
                for (id, keys) in accounts.sorted(by: { $0.key < $1.key }) {
                    let base: [String: TestJSON] = [
                        "upstreams": [.string(servers.dnss.upstreamSpec)],
                        "localDNSServers": [.string(servers.unbound.address)],
                        "clientKeys": [["id": .string(keyID), "secret": .string(secret), "role": "resolve"]],
                    ]
                    let account = TestJSON.object(base.merging(keys) { $1 })
                    try LoopbackGuard.checkAccount(id: id, account)
                    let put = try await service.client.put(
                        "/v1/accounts/\(id)", json: account, headers: ["Authorization": "Bearer \(adminToken)"])
                    #expect(put.status == 201, "\(put)")
                }
                do {
                    try await body(URL(string: "http://\(service.address)")!, servers, service)
                } catch {
                    Issue.record("httpdnsd log:\n\(service.log().suffix(4000))")
                    throw error
                }
                #expect(!service.log().contains(secret), "the client secret reached the log")
                #expect(!service.log().contains(aesKey), "the AES key reached the log")
            }
        }
    }
}
