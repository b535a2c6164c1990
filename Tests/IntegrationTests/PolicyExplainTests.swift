import Foundation
import HTTPDNSTestSupport
import Testing

/// `GET /v1/{account}/policy/explain` against the real binary: the domain-list decision, each
/// rule considered with the condition that failed or held, the host override in force, and what
/// answers; the manage role, signed like the other tenant manage endpoints.
@Suite("Policy explain")
struct PolicyExplainTests {
    static let manager = "explain-manage-secret-1234", reader = "explain-resolve-secret-1234"

    static func account(_ servers: TestServers, signed: Bool) -> TestJSON {
        var extra: [String: TestJSON] = [
            "domains": ["deny": ["ads.example.test"]],
            "hostOverrides": [["hosts": ["*.example.test"], "ttl": 30]],
            "rules": [
                [
                    "name": "canary", "hosts": ["api.example.test"],
                    "when": ["networks": ["10.0.0.0/8"], "params": ["appver": "2.*"]],
                    "answer": ["ipv4": ["192.0.2.10"], "weights": [1], "ttl": 20], "extra": "c",
                ],
                ["name": "rest", "hosts": ["*.example.test"], "when": ["networks": ["10.0.0.0/8"]], "answer": ["ipv6": ["2001:db8::1"]]],
            ],
        ]
        if signed {
            extra["requireSignedRequests"] = true
            extra["clientKeys"] = [
                ["id": "r1", "secret": .string(reader), "role": "resolve"], ["id": "m1", "secret": .string(manager), "role": "manage"],
            ]
        }
        return loopbackAccount(servers, extra)
    }

    @Test func explainSaysWhatAnswersAndWhy() async throws {
        try await withService(configure: { servers, options in
            options.config = ["accounts": ["default": Self.account(servers, signed: false)]]
        }) { _, service in
            let client = service.client
            // The first rule fails on its params, the second holds and answers.
            let ruled = try await client.get("/v1/default/policy/explain?host=api.example.test&client_ip=10.1.2.3&sdns-appver=1.0")
            #expect(ruled.status == 200, "\(ruled)")
            #expect(ruled.json["client_ip"]?.string == "10.1.2.3" && ruled.json["params"]?["appver"]?.string == "1.0")
            #expect(ruled.json["domains"]?["allowed"]?.bool == true)
            let rules = try #require(ruled.json["rules"]?.array, "\(ruled)")
            #expect(rules.map { $0["name"]?.string } == ["canary", "rest"])
            #expect(rules.map { $0["matched"]?.bool } == [false, true])
            #expect(rules[0]["reason"]?.string == "params.appver failed: sdns-appver '1.0' matches none of '2.*'", "\(ruled)")
            #expect(ruled.json["answer"]?["by"]?.string == "rule" && ruled.json["answer"]?["rule"]?.string == "rest", "\(ruled)")
            #expect(ruled.json["hostOverride"]?["ttl"]?.int == 30, "\(ruled)")
            // The first rule holds.
            let canary = try await client.get("/v1/default/policy/explain?host=api.example.test&client_ip=10.1.2.3&sdns-appver=2.2")
            #expect(canary.json["rules"]?.array?.count == 1)
            #expect(canary.json["answer"]?["ipv4"]?.strings == ["192.0.2.10"] && canary.json["answer"]?["extra"]?.string == "c")
            // The caller itself (127.0.0.1) meets no rule: the upstreams answer.
            let upstream = try await client.get("/v1/default/policy/explain?host=api.example.test")
            #expect(upstream.json["client_ip"]?.string == "127.0.0.1")
            #expect(upstream.json["answer"]?["by"]?.string == "upstream", "\(upstream)")
            #expect(upstream.json["rules"]?.array?.allSatisfy { $0["matched"]?.bool == false } == true)
            // The domain list refuses before any rule.
            let refused = try await client.get("/v1/default/policy/explain?host=ads.example.test&client_ip=10.1.2.3")
            #expect(refused.json["domains"]?["allowed"]?.bool == false && refused.json["answer"]?["by"]?.string == "refused")
            #expect(refused.json["rules"]?.array?.isEmpty == true, "\(refused)")
            // A name no rule or override names.
            let other = try await client.get("/v1/default/policy/explain?host=www.example.org")
            #expect(other.json["hostOverride"]?.isNull == true && other.json["answer"]?["by"]?.string == "upstream", "\(other)")
            // Bad input: 400, naming what is wrong.
            expectError(try await client.get("/v1/default/policy/explain"), status: 400, code: "MissingArgument")
            expectError(try await client.get("/v1/default/policy/explain?host=a_b%20c"), status: 400, code: "InvalidHost")
            expectError(try await client.get("/v1/default/policy/explain?host=a.test&client_ip=x"), status: 400, code: "InvalidParameter")
            expectError(try await client.get("/v1/default/policy/explain?host=a.test&type=A"), status: 400, code: "InvalidParameter")
            // Nothing was resolved or counted.
            #expect(try await client.get("/v1/default/stats").json.array?.isEmpty == true)
        }
    }

    @Test func explainNeedsTheManageRole() async throws {
        try await withService(configure: { servers, options in
            options.config = ["accounts": ["default": loopbackAccount(servers), "keyed": Self.account(servers, signed: true)]]
        }) { _, service in
            func get(_ kid: String, _ secret: String) async throws -> HTTPClientResponse {
                let signed = try ClientRequestSigner.sign(
                    method: "GET", path: "/v1/keyed/policy/explain", args: [("host", "api.example.test")], secret: secret,
                    t: ClientRequestSigner.expiry(in: 120))
                return try await service.client.get("/v1/keyed/policy/explain?\(signed.signedQuery(kid: kid))")
            }
            expectError(try await get("r1", Self.reader), status: 403, code: "Forbidden")
            let explained = try await get("m1", Self.manager)
            #expect(explained.status == 200 && explained.json["host"]?.string == "api.example.test", "\(explained)")
            expectError(try await service.client.get("/v1/keyed/policy/explain?host=api.example.test"), status: 401, code: "Unauthorized")
        }
    }
}
