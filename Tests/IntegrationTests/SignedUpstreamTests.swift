import Foundation
import HTTPDNSTestSupport
import Testing

/// The EMAS HTTPDNS API upstream kind and the signatures of both Alibaba APIs, against the
/// responder, which checks them.
@Suite("Signed and EMAS upstreams")
struct SignedUpstreamTests {
    /// Starts an extra responder (with secrets) and httpdnsd whose default account uses it.
    private func withSignedService(
        jsonSecret: String? = nil, httpdnsSecret: String? = nil, kind: String,
        account: [String: TestJSON],
        _ body: (TestJSONResponder, HTTPDNSDProcess) async throws -> Void
    ) async throws {
        try await withTestServers { servers in
            try await withJSONResponder(servers, jsonSecret: jsonSecret, httpdnsSecret: httpdnsSecret) { responder in
                let spec = kind == "httpdns" ? responder.httpdnsUpstreamSpec : responder.upstreamSpec
                var options = servers.options(upstreams: [spec], localDNSFallback: false)
                var config = account
                config["localDNSFallback"] = false
                options.config = ["accounts": ["default": loopbackAccount(servers, upstreams: [spec], config)]]
                try await withHTTPDNSD(options) { service in
                    do {
                        try await body(responder, service)
                    } catch {
                        Issue.record("httpdnsd log:\n\(service.log().suffix(4000))")
                        throw error
                    }
                }
            }
        }
    }

    @Test func httpdnsUpstreamResolvesThroughTheEMASAPI() async throws {
        try await withSignedService(kind: "httpdns", account: [:]) { responder, service in
            let body = try await service.client.get("/v1/default/resolve?host=\(TestZone.cnameChain)&type=both").json
            #expect(Set(body["ips"]?.strings ?? []) == Set(TestZone.wwwV4), "\(body)")
            #expect(body["ipsv6"]?.strings == TestZone.wwwV6)
            #expect(body["origin_ttl"]?.int == Int(TestZone.cnameChainTTL))
            let requests = try await responder.requests(for: TestZone.cnameChain)
            #expect(requests.count == 2)
            #expect(requests.allSatisfy { $0.path == "/default/d" }, "\(requests.map(\.path))")
            #expect(Set(requests.compactMap { $0.query["query"] }) == ["4", "6"])
        }
    }

    @Test func httpdnsUpstreamNXDOMAINIsAnEmptyAnswer() async throws {
        try await withSignedService(kind: "httpdns", account: [:]) { _, service in
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.nxdomain())&type=A")
            #expect(response.status == 200)
            #expect(response.json["ips"]?.strings == [])
        }
    }

    @Test func httpdnsUpstreamSignsWithTheSecretKey() async throws {
        try await withSignedService(
            httpdnsSecret: "emas-secret-1", kind: "httpdns",
            account: ["secretKey": "emas-secret-1"]
        ) { responder, service in
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            #expect(response.status == 200, "\(response)")
            #expect(Set(response.json["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            let request = try #require(try await responder.requests(for: TestZone.www).first)
            #expect(request.path == "/default/sign_d")
            #expect(request.query["s"]?.count == 32)
        }
    }

    @Test func httpdnsUpstreamWithAWrongSecretIsAPermissionFailure() async throws {
        try await withSignedService(
            httpdnsSecret: "emas-secret-1", kind: "httpdns",
            account: ["secretKey": "not-the-secret"]
        ) { responder, service in
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            expectError(response, status: 502, code: "UpstreamFailed")
            let metrics = try await service.metrics()
            #expect(upstreamRequests(metrics, upstream: responder.httpdnsUpstreamSpec, outcome: "permission") >= 1)
            let stats = try await service.client.get("/v1/default/stats").json.array ?? []
            let record = stats.first { $0["domain"]?.string == TestZone.www && $0["type"]?.int == 1 }
            #expect((record?["noPermissionErro"]?.int ?? 0) >= 1, "\(stats)")
        }
    }

    @Test func jsonUpstreamSignsRequestsWithTheAccountKeys() async throws {
        try await withSignedService(
            jsonSecret: "ak-secret-1", kind: "json",
            account: ["accessKeyId": "AKID1", "accessKeySecret": "ak-secret-1"]
        ) { responder, service in
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            #expect(response.status == 200, "\(response)")  // the responder checked the key
            #expect(Set(response.json["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            let request = try #require(try await responder.requests(for: TestZone.www).first)
            #expect(request.query["uid"] == "default")
            #expect(request.query["ak"] == "AKID1")
            #expect(request.query["key"]?.count == 64)
            let ts = try #require(request.query["ts"].flatMap { Double($0) })
            #expect(abs(ts - Date().timeIntervalSince1970) < 60)
        }
    }

    @Test func jsonUpstreamWithAWrongSecretIsAPermissionFailure() async throws {
        try await withSignedService(
            jsonSecret: "ak-secret-1", kind: "json",
            account: ["accessKeyId": "AKID1", "accessKeySecret": "wrong-secret"]
        ) { responder, service in
            let response = try await service.client.get("/v1/default/resolve?host=\(TestZone.www)&type=A")
            expectError(response, status: 502, code: "UpstreamFailed")
            let metrics = try await service.metrics()
            #expect(upstreamRequests(metrics, upstream: responder.upstreamSpec, outcome: "permission") >= 1)
        }
    }
}
