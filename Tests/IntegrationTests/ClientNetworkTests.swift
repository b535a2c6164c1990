import Foundation
import HTTPDNSTestSupport
import HTTPDNSWire
import Testing

/// Per-network caches (`ispEnable`): the client network reaches the JSON upstream as
/// `edns_client_subnet`, keys the cache and the stats, and never leaves the service without it.
@Suite("Client networks")
struct ClientNetworkTests {
    /// httpdnsd with the JSON responder as the default account's only upstream and `ispEnable`
    /// as given; `serviceKeys` are added at the top level of the config file.
    private func withJSONUpstream(
        ispEnable: Bool, serviceKeys: [String: TestJSON] = [:],
        _ body: (TestServers, HTTPDNSDProcess) async throws -> Void
    ) async throws {
        try await withService(
            upstreams: { [$0.json.upstreamSpec] },
            configure: { servers, options in
                var config: [String: TestJSON] = [
                    "accounts": [
                        "default": loopbackAccount(servers, upstreams: [servers.json.upstreamSpec], ["ispEnable": .bool(ispEnable)])
                    ]
                ]
                config.merge(serviceKeys) { _, new in new }
                options.config = .object(config)
            }, body)
    }

    /// `edns_client_subnet` of every request the responder received for `name` (nil where absent).
    private func subnets(_ servers: TestServers, _ name: String) async throws -> [String?] {
        try await servers.json.requests(for: name).map { $0.query["edns_client_subnet"] }
    }

    @Test func clientIPReachesTheJSONUpstreamAsItsNetwork() async throws {
        try await withJSONUpstream(ispEnable: true) { servers, service in
            let name = TestZone.unique("ecs")
            let response = try await service.client.get("/v1/default/resolve?host=\(name)&type=A&client_ip=198.51.100.7")
            #expect(response.status == 200)
            #expect(response.json["ips"]?.strings == TestZone.wildV4)
            #expect(try await subnets(servers, name) == ["198.51.100.0/24"])
        }
    }

    @Test func eachNetworkHasItsOwnCacheEntryAndStatsRecord() async throws {
        try await withJSONUpstream(ispEnable: true) { servers, service in
            let name = TestZone.unique("ecs")
            let path = "/v1/default/resolve?host=\(name)&type=A&client_ip="
            #expect(try await service.client.get(path + "198.51.100.7").json["source"]?.string == "upstream")
            #expect(try await service.client.get(path + "198.51.100.99").json["source"]?.string == "cache")
            #expect(try await service.client.get(path + "2001:db8:aa:bb01::9").json["source"]?.string == "upstream")
            #expect(try await subnets(servers, name) == ["198.51.100.0/24", "2001:db8:aa:bb00::/56"])

            let list = try await service.client.get("/v1/default/cache?limit=100").json
            let entries = (list["entries"]?.array ?? []).filter { $0["host"]?.string == name }
            #expect(Set(entries.compactMap { $0["network"]?.string }) == ["198.51.100.0/24", "2001:db8:aa:bb00::/56"], "\(list)")
            #expect(entries.count == 2)

            // A cache lookup answers only for the asking client's network.
            #expect(try await service.client.get("/v1/default/cache?host=\(name)&type=A&client_ip=198.51.100.1").status == 200)
            expectError(
                try await service.client.get("/v1/default/cache?host=\(name)&type=A&client_ip=203.0.113.1"),
                status: 404, code: "NotFound")

            let stats = try await service.client.get("/v1/default/stats").json
            let records = (stats.array ?? []).filter { $0["domain"]?.string == name }
            #expect(Set(records.compactMap { $0["sp"]?.string }) == ["198.51.100.0/24", "2001:db8:aa:bb00::/56"], "\(stats)")
        }
    }

    @Test func withoutIspEnableNoClientAddressReachesTheUpstream() async throws {
        try await withJSONUpstream(ispEnable: false) { servers, service in
            let name = TestZone.unique("noecs")
            let path = "/v1/default/resolve?host=\(name)&type=A"
            #expect(try await service.client.get(path + "&client_ip=198.51.100.7").json["source"]?.string == "upstream")
            #expect(try await service.client.get(path + "&client_ip=203.0.113.9").json["source"]?.string == "cache")
            #expect(try await service.client.get(path).json["source"]?.string == "cache")
            let requests = try await servers.json.requests(for: name)
            #expect(requests.count == 1)
            #expect(requests.allSatisfy { $0.query["edns_client_subnet"] == nil }, "\(requests)")

            let list = try await service.client.get("/v1/default/cache?limit=100").json
            let entries = (list["entries"]?.array ?? []).filter { $0["host"]?.string == name }
            #expect(entries.count == 1)
            #expect(entries.allSatisfy { $0["network"] == nil }, "\(list)")
            let stats = try await service.client.get("/v1/default/stats").json
            #expect((stats.array ?? []).filter { $0["domain"]?.string == name }.compactMap { $0["sp"]?.string } == ["default"])
        }
    }

    @Test func trustedProxyForwardsTheClientAddress() async throws {
        try await withJSONUpstream(ispEnable: true, serviceKeys: ["trustedProxies": ["127.0.0.1"]]) { servers, service in
            let name = TestZone.unique("xff")
            let response = try await service.client.get(
                "/v1/default/resolve?host=\(name)&type=A", headers: ["X-Forwarded-For": "198.51.100.1, 203.0.113.9"])
            #expect(response.status == 200)
            // The right-most address a trusted proxy appended, not what the client wrote to its left.
            #expect(try await subnets(servers, name) == ["203.0.113.0/24"])
        }
    }

    @Test func forwardedForOfAnUntrustedPeerIsIgnored() async throws {
        try await withJSONUpstream(ispEnable: true) { servers, service in
            let name = TestZone.unique("xff")
            let response = try await service.client.get(
                "/v1/default/resolve?host=\(name)&type=A", headers: ["X-Forwarded-For": "203.0.113.9"])
            #expect(response.status == 200)
            #expect(try await subnets(servers, name) == ["127.0.0.0/24"])
        }
    }

    /// The fast path keeps the networks of an `ispEnable` account apart in every format: two
    /// networks whose answers differ (unbound's record changed between their first requests) each
    /// get their own answer from the cache, named by each format's own client argument and by a
    /// trusted proxy's `X-Forwarded-For`, and every one of those hits is a fast-path answer.
    @Test func eachNetworksHitsStayApartOnTheFastPathInEveryFormat() async throws {
        try await withJSONUpstream(ispEnable: true, serviceKeys: ["trustedProxies": ["127.0.0.1"]]) { servers, service in
            let name = TestZone.unique("ispfast")
            let networks = [("198.51.100.7", "127.0.0.61"), ("2001:db8:aa:bb01::9", "127.0.0.62")]
            for (client, address) in networks {
                try await servers.unbound.setAddresses(of: name, [address], ttl: 3600)
                let first = try await service.client.get("/v1/default/resolve?host=\(name)&type=A&client_ip=\(client)")
                #expect(first.json["ips"]?.strings == [address], "\(first)")
                #expect(first.json["source"]?.string == "upstream", "\(first)")
            }
            let fastAnswers = { try await service.metrics().sum("httpdns_http_fast_path_total", ["listener": "main"]) }
            let before = try await fastAnswers()
            var hits = 0
            for (client, address) in networks {
                let other = networks.first { $0.0 != client }!.1
                let encoded = client.replacingOccurrences(of: ":", with: "%3A")
                let subnet = DNSQueryMessage.ClientSubnet(
                    family: client.contains(":") ? 2 : 1, sourcePrefixLength: client.contains(":") ? 56 : 24, scopePrefixLength: 0,
                    address: Self.addressBytes(client))
                let forwarded = ["X-Forwarded-For": client]
                let requests: [(String, [String: String])] = [
                    ("/v1/default/resolve?host=\(name)&type=A&client_ip=\(encoded)", [:]),
                    ("/default/d?host=\(name)&ip=\(encoded)", [:]),
                    ("/resolve?name=\(name)&edns_client_subnet=\(encoded)", [:]),
                    (
                        "/dns-query?dns=\(RFC8484Tests.base64URL(try DNSQueryWriter.query(name: name, type: 1, id: 7, clientSubnet: subnet)))",
                        [:]
                    ),
                    ("/v1/default/resolve?host=\(name)&type=A", forwarded),
                    ("/default/d?host=\(name)", forwarded),
                    ("/resolve?name=\(name)", forwarded),
                    ("/dns-query?name=\(name)", ["Accept": "application/dns-json", "X-Forwarded-For": client]),
                    (
                        "/v1/default/dns-query?dns=\(RFC8484Tests.base64URL(try DNSQueryWriter.query(name: name, type: 1, id: 8)))",
                        forwarded
                    ),
                ]
                for (path, headers) in requests {
                    let response = try await service.client.get(path, headers: headers)
                    #expect(response.status == 200, "\(path): \(response)")
                    #expect(
                        Self.holds(response.body, address) && !Self.holds(response.body, other), "\(client) \(path) \(headers): \(response)"
                    )
                    hits += 1
                }
            }
            #expect(try await fastAnswers() - before == Double(hits), "every hit answered on the fast path")
        }
    }

    /// The bytes of an IP address (`inet_pton`).
    private static func addressBytes(_ text: String) -> [UInt8] {
        if text.contains(":") {
            var storage = in6_addr()
            _ = inet_pton(AF_INET6, text, &storage)
            return withUnsafeBytes(of: &storage) { Array($0) }
        }
        var storage = in_addr()
        _ = inet_pton(AF_INET, text, &storage)
        return withUnsafeBytes(of: &storage) { Array($0) }
    }

    /// Whether a JSON answer holds `address` as a string, or a DNS message as A record data.
    private static func holds(_ body: [UInt8], _ address: String) -> Bool {
        if String(decoding: body, as: UTF8.self).contains("\"\(address)\"") { return true }
        let bytes = addressBytes(address)
        return body.count >= 4 && (0...(body.count - 4)).contains { Array(body[$0..<($0 + 4)]) == bytes }
    }
}
