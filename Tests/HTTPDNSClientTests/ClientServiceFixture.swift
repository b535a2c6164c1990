import Foundation
import HTTPDNSTestSupport
import Testing

/// The real httpdnsd on loopback for the client's tests: the test zone behind dnss and
/// unbound, and account `shop` requiring signatures with the `resolve` key `k1`.
enum ClientServiceFixture {
    static let adminToken = "client-tests-admin-token-1234"
    static let keyID = "k1"
    static let secret = "client-tests-secret-0123456789"

    /// Runs `body` with the service's base URL; afterwards the secret must not be in its log.
    static func withSignedService(_ body: (URL, TestServers, HTTPDNSDProcess) async throws -> Void) async throws {
        try await withTestServers { servers in
            var options = servers.options()
            options.adminToken = adminToken
            try await withHTTPDNSD(options) { service in
                let account: TestJSON = .object([
                    "upstreams": [.string(servers.dnss.upstreamSpec)],
                    "localDNSServers": [.string(servers.unbound.address)],
                    "requireSignedRequests": true,
                    "clientKeys": [["id": .string(keyID), "secret": .string(secret), "role": "resolve"]],
                ])
                try LoopbackGuard.checkAccount(id: "shop", account)
                let put = try await service.client.put(
                    "/v1/accounts/shop", json: account, headers: ["Authorization": "Bearer \(adminToken)"])
                #expect(put.status == 201, "\(put)")
                do {
                    try await body(URL(string: "http://\(service.address)")!, servers, service)
                } catch {
                    Issue.record("httpdnsd log:\n\(service.log().suffix(4000))")
                    throw error
                }
                #expect(!service.log().contains(secret), "the client secret reached the log")
            }
        }
    }
}
