import Foundation
import HTTPDNSTestSupport
import Testing

/// An account's `rules` against the real binary, dnss and unbound on loopback: every wire format
/// (v1, EMAS `/d` and batch, DoH JSON, RFC 8484 and plain DNS through dnspython) answers a name
/// from the first rule whose conditions hold (the client network from `client_ip`, `ip`,
/// `edns_client_subnet` or the query's Client Subnet; `sdns-*` arguments), and resolves it as
/// usual when none does. Rule answers are counted, never cached.
@Suite("Answer rules")
struct AnswerRulesIntegrationTests {
    struct Names {
        let net = TestZone.unique("net")
        let weighted = TestZone.unique("weighted")
    }

    static func account(_ servers: TestServers, _ names: Names) -> TestJSON {
        loopbackAccount(
            servers,
            [
                "ipv6Enable": true,
                "rules": [
                    [
                        "name": "canary", "hosts": [.string(TestZone.www)],
                        "when": ["networks": ["10.0.0.0/8"], "params": ["appver": "2.*"]],
                        "answer": ["ipv4": ["192.0.2.10", "192.0.2.11"], "ipv6": ["2001:db8::10"], "ttl": 30],
                        "extra": "canary \"v2\"",
                    ],
                    [
                        "name": "net", "hosts": [.string(names.net)], "when": ["networks": ["10.0.0.0/8", "2001:db8::/32"]],
                        "answer": ["ipv4": ["192.0.2.20"], "ipv6": ["2001:db8::20"], "ttl": 45], "extra": "net",
                    ],
                    [
                        "name": "weighted", "hosts": [.string(names.weighted)],
                        "answer": ["ipv4": ["192.0.2.1", "192.0.2.2"], "weights": [3, 1]],
                    ],
                ],
            ])
    }

    /// The service with the account above, a plain DNS listener and an operations listener.
    func withRulesService(_ body: (TestServers, HTTPDNSDProcess, Names, PlainDNSTestClient, HTTPClient) async throws -> Void) async throws {
        let names = Names()
        try await withService(configure: { servers, options in
            options.listen("--dns-listen", port: "dns")
            options.listen("--ops-listen", port: "ops")
            options.config = ["accounts": ["default": Self.account(servers, names)]]
        }) { servers, service in
            let dns = PlainDNSTestClient(port: try service.port(named: "dns"))
            try await body(servers, service, names, dns, HTTPClient(port: try service.port(named: "ops")))
        }
    }

    @Test func everyWireFormatAnswersFromTheFirstRuleThatHolds() async throws {
        try await withRulesService { servers, service, names, dns, ops in
            let client = service.client
            // v1: the network from client_ip, the params from sdns-*; the answer is the rule's.
            let v1 = try await client.get("/v1/default/resolve?host=\(names.net)&type=A&client_ip=10.1.2.3")
            #expect(v1.status == 200, "\(v1)")
            #expect(v1.json["ips"]?.strings == ["192.0.2.20"] && v1.json["ttl"]?.int == 45, "\(v1)")
            #expect(v1.json["source"]?.string == "rule" && v1.json["extra"]?.string == "net", "\(v1)")
            // No rule holds for the peer (127.0.0.1): resolved as usual.
            let plain = try await client.get("/v1/default/resolve?host=\(names.net)&type=A")
            #expect(plain.json["ips"]?.strings == TestZone.wildV4 && plain.json["extra"] == nil, "\(plain)")
            // A cached name a rule then answers: the cache hit does not bypass the rules.
            #expect(try await client.get("/v1/default/resolve?host=\(TestZone.www)&type=A").json["source"]?.string == "upstream")
            #expect(try await client.get("/v1/default/resolve?host=\(TestZone.www)&type=A").json["source"]?.string == "cache")
            let canary = try await client.get("/v1/default/resolve?host=\(TestZone.www)&type=both&client_ip=10.9.9.9&sdns-appver=2.4.1")
            #expect(Set(canary.json["ips"]?.strings ?? []) == ["192.0.2.10", "192.0.2.11"], "\(canary)")
            #expect(canary.json["ipsv6"]?.strings == ["2001:db8::10"] && canary.json["extra"]?.string == "canary \"v2\"", "\(canary)")
            // One condition fails (the app version): resolved as usual.
            let old = try await client.get("/v1/default/resolve?host=\(TestZone.www)&type=A&client_ip=10.9.9.9&sdns-appver=1.9")
            #expect(old.json["source"]?.string == "cache", "\(old)")
            // v1 still refuses an argument it does not read.
            expectError(try await client.get("/v1/default/resolve?host=\(TestZone.www)&appver=2"), status: 400, code: "InvalidParameter")

            // EMAS: `ip` is the client; `extra` as its SDKs read it; the batch too.
            let emas = try await client.get("/default/d?host=\(TestZone.www)&ip=10.0.0.1&sdns-appver=2.0")
            #expect(emas.json["extra"]?.string == "canary \"v2\"" && emas.json["ttl"]?.int == 30, "\(emas)")
            #expect(emas.json["client_ip"]?.string == "10.0.0.1")
            let batch = try await client.get("/default/resolve?host=\(TestZone.www),\(names.net)&ip=10.0.0.1")
            let answers = try #require(batch.json["dns"]?.array, "\(batch)")
            #expect(Set(answers[0]["ips"]?.strings ?? []) == Set(TestZone.wwwV4) && answers[0]["extra"] == nil, "\(batch)")
            #expect(answers[1]["ips"]?.strings == ["192.0.2.20"] && answers[1]["extra"]?.string == "net", "\(batch)")

            // DoH JSON: the network of edns_client_subnet.
            let doh = try await client.get("/resolve?name=\(names.net)&type=AAAA&edns_client_subnet=2001:db8:1::/48")
            #expect(doh.json["Answer"]?.array?.map { $0["data"]?.string } == ["2001:db8::20"], "\(doh)")
            #expect(doh.json["Answer"]?.array?.first?["TTL"]?.int == 45, "\(doh)")

            // RFC 8484 and plain DNS through dnspython: the query's Client Subnet.
            let doh8484 = DoHTestClient(url: "http://127.0.0.1:\(service.port)/dns-query")
            let ruled = try await doh8484.query(names.net, type: "A", post: false, ecs: "10.4.0.0/16")
            #expect(ruled.answer.map(\.data) == ["192.0.2.20"] && ruled.answer.first?.ttl == 45, "\(ruled)")
            let unruled = try await doh8484.query(names.net, type: "A", post: true)
            #expect(unruled.answer.map(\.data) == TestZone.wildV4, "\(unruled)")
            let replies = try await dns.ask(["\(names.net)/AAAA"], ecs: "2001:db8:7::/48")
            #expect(replies[0].answer.map(\.data) == ["2001:db8::20"], "\(replies)")
            let tcp = try await dns.ask(["\(names.net)/A"], tcp: true, ecs: "10.1.0.0/16")
            #expect(tcp[0].answer.map(\.data) == ["192.0.2.20"], "\(tcp)")

            // Counted: per name in the statistics, per account in /metrics, per rule on the ops listener.
            let stats = try await client.get("/v1/default/stats?domain=\(names.net)")
            let ruleNum = stats.json.array?.reduce(0) { $0 + ($1["ruleNum"]?.int ?? 0) }
            #expect(ruleNum == 6, "\(stats)")
            let metrics = PrometheusText(try await ops.get("/metrics").text)
            #expect(metrics.sum("httpdns_rule_answers_total") == 9)
            #expect(metrics.sum("httpdns_rule_answers_total", ["account": "default"]) == 9)
            #expect(metrics.sum("httpdns_rule_answers_by_rule_total", ["account": "default", "rule": "net"]) == 6)
            #expect(metrics.sum("httpdns_rule_answers_by_rule_total", ["account": "default", "rule": "canary"]) == 3)
            // Never cached, so never persisted or shared: the cache has only what the upstream said.
            let cached = try await client.get("/v1/default/cache?host=\(names.net)&type=A")
            #expect(cached.json["ips"]?.strings == TestZone.wildV4, "\(cached)")
            _ = servers
        }
    }

    /// Weights 3:1 put the first address first about three times in four.
    @Test func weightsSplitTheFirstAddress() async throws {
        try await withRulesService { _, service, names, _, _ in
            var first = 0
            let count = 400
            for _ in 0..<count {
                let answer = try await service.client.get("/v1/default/resolve?host=\(names.weighted)&type=A")
                let ips = try #require(answer.json["ips"]?.strings, "\(answer)")
                #expect(Set(ips) == ["192.0.2.1", "192.0.2.2"])
                if ips.first == "192.0.2.1" { first += 1 }
            }
            #expect((0.65...0.85).contains(Double(first) / Double(count)), "\(first) of \(count)")
        }
    }

    /// A health check leaves out the address whose TCP connect fails (127.0.0.2 has no listener
    /// on the operations port, 127.0.0.1 has), and never answers empty.
    @Test func aHealthCheckDropsADeadAddress() async throws {
        let name = TestZone.unique("health"), dead = TestZone.unique("dead")
        try await withService(configure: { servers, options in
            options.withPorts { ports, options in
                options.arguments += ["--ops-listen", ports.address("ops")]
                let check: TestJSON = ["port": .number(Double(ports["ops"]))]
                options.config = [
                    "accounts": [
                        "default": loopbackAccount(
                            servers,
                            [
                                "rules": [
                                    [
                                        "name": "live", "hosts": [.string(name)],
                                        "answer": ["ipv4": ["127.0.0.2", "127.0.0.1"], "healthCheck": check],
                                    ],
                                    [
                                        "name": "dead", "hosts": [.string(dead)],
                                        "answer": ["ipv4": ["127.0.0.4", "127.0.0.3"], "healthCheck": check],
                                    ],
                                ]
                            ])
                    ]
                ]
            }
        }) { _, service in
            let left = try await poll {
                let ips = try await service.client.get("/v1/default/resolve?host=\(name)&type=A").json["ips"]?.strings
                return ips == ["127.0.0.1"] ? ips : nil
            }
            #expect(left == ["127.0.0.1"])
            // Every address failing: every address is answered.
            // (Checked on every answer while the check runs and after its results are in.)
            for _ in 0..<10 {
                let all = try await service.client.get("/v1/default/resolve?host=\(dead)&type=A")
                #expect(all.json["ips"]?.strings == ["127.0.0.4", "127.0.0.3"], "\(all)")
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}
