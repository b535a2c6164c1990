import Foundation
import HTTPDNSTestSupport
import Testing

/// Starts the loopback DNS stack and httpdnsd for one test and stops both on every path.
///
/// `upstreams` picks the default account's upstreams from the running servers (default: dnss);
/// `configure` adjusts the options (config file, token, ...) before the binary starts.
func withService(
    upstreams: (TestServers) -> [String] = { [$0.dnss.upstreamSpec] },
    localDNSFallback: Bool = true,
    configure: (TestServers, inout HTTPDNSDOptions) -> Void = { _, _ in },
    _ body: (TestServers, HTTPDNSDProcess) async throws -> Void
) async throws {
    try await withTestServers { servers in
        var options = servers.options(upstreams: upstreams(servers), localDNSFallback: localDNSFallback)
        configure(servers, &options)
        try await withHTTPDNSD(options) { service in
            do {
                try await body(servers, service)
            } catch {
                Issue.record("httpdnsd log:\n\(service.log().suffix(4000))")
                throw error
            }
        }
    }
}

/// Checks that `response` is the JSON error `{"error":{"code":code,...}}` with `status`.
func expectError(
    _ response: HTTPClientResponse, status: Int, code: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(response.status == status, "status of \(response)", sourceLocation: sourceLocation)
    #expect(response.json["error"]?["code"]?.string == code, "code of \(response)", sourceLocation: sourceLocation)
    #expect(
        response.json["error"]?["message"]?.string?.isEmpty == false, "message of \(response)",
        sourceLocation: sourceLocation)
    #expect(
        response.header("content-type")?.hasPrefix("application/json") == true,
        "content type of \(response)", sourceLocation: sourceLocation)
}

/// A default-account config object with loopback upstreams and fallback, plus `extra` keys.
func loopbackAccount(
    _ servers: TestServers, upstreams: [String]? = nil,
    _ extra: [String: TestJSON] = [:]
) -> TestJSON {
    var account: [String: TestJSON] = [
        "upstreams": .array((upstreams ?? [servers.dnss.upstreamSpec]).map { .string($0) }),
        "localDNSServers": [.string(servers.unbound.address)],
    ]
    account.merge(extra) { _, new in new }
    return .object(account)
}

/// Like `withService`, with the default account on the JSON upstream alone (no system-resolver
/// fallback, so every answer is the JSON server's) and `extra` account keys.
func withJSONUpstreamAccount(
    _ extra: [String: TestJSON] = [:],
    configure: (TestServers, inout HTTPDNSDOptions) -> Void = { _, _ in },
    _ body: (TestServers, HTTPDNSDProcess) async throws -> Void
) async throws {
    try await withService(
        upstreams: { [$0.json.upstreamSpec] }, localDNSFallback: false,
        configure: { servers, options in
            var keys: [String: TestJSON] = ["localDNSFallback": false]
            keys.merge(extra) { _, new in new }
            options.config = ["accounts": ["default": loopbackAccount(servers, upstreams: [servers.json.upstreamSpec], keys)]]
            configure(servers, &options)
        }, body)
}

/// Sum of httpdns_upstream_requests_total for `upstream` (any account) with `outcome` (any if nil).
func upstreamRequests(_ metrics: PrometheusText, upstream: String, outcome: String? = nil) -> Double {
    var labels = ["upstream": upstream]
    if let outcome { labels["outcome"] = outcome }
    return metrics.sum("httpdns_upstream_requests_total", labels)
}

/// Like `withService`, with account `id` added through the admin API (token `adminToken`):
/// loopback upstreams, `requireSignedRequests` and one `resolve` client key `k1` with `secret`.
/// Afterwards the secret must not be in the service's log.
func withSignedAccountService(
    id: String, secret: String, adminToken: String, arguments: [String] = [],
    _ body: (TestServers, HTTPDNSDProcess) async throws -> Void
) async throws {
    try await withService(configure: { _, options in
        options.adminToken = adminToken
        options.arguments += arguments
    }) { servers, service in
        let account = loopbackAccount(
            servers,
            [
                "requireSignedRequests": true,
                "clientKeys": [["id": "k1", "secret": .string(secret), "role": "resolve"]],
            ])
        try LoopbackGuard.checkAccount(id: id, account)
        let put = try await service.client.put("/v1/accounts/\(id)", json: account, headers: ["Authorization": "Bearer \(adminToken)"])
        #expect(put.status == 201, "\(put)")
        try await body(servers, service)
        #expect(!service.log().contains(secret), "a client secret reached the log")
    }
}

/// Lower-case hex digest of `text`'s UTF-8 by python3's hashlib (`algorithm`: md5, sha256, ...):
/// expected signatures computed apart from the server's code.
func pythonHexDigest(_ algorithm: String, _ text: String) throws -> String {
    try CommandRun.run(
        "/usr/bin/python3",
        ["-c", "import hashlib, sys; print(hashlib.new(sys.argv[1], sys.argv[2].encode()).hexdigest())", algorithm, text],
        mergingStandardError: false
    ).text.trimmingCharacters(in: .whitespacesAndNewlines)
}
