import Foundation
import HTTPDNSTestSupport
import HTTPDNSWire
import Testing

/// An account's `domains` against the real binary: every wire format refuses a name the list
/// refuses in its own way, and the upstream (the JSON responder, which records what it is
/// asked) never hears of it, even for a name cached before an admin PUT denied it.
@Suite("Domain lists")
struct DomainListTests {
    static let token = "integration-admin-token-domains"
    static var bearer: [String: String] { ["Authorization": "Bearer \(token)"] }

    /// `?dns=` of a query for `name`/`type`.
    static func dnsArgument(_ name: String, type: UInt16) throws -> String {
        Data(try DNSQueryWriter.query(name: name, type: type, id: 0x4242)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The RCODE of an RFC 8484 response body.
    static func rcode(_ response: HTTPClientResponse) -> Int? {
        response.body.count >= 4 ? Int(response.body[3] & 0x0F) : nil
    }

    @Test func aListedAccountRefusesOtherNamesInEveryFormat() async throws {
        // Allowed: names under wild.example.test (the wildcard), www exactly; `denied`, below the
        // wildcard, is refused by `deny`; `unlisted` matches nothing.
        let allowed = TestZone.unique("ok"), denied = TestZone.unique("deny"), unlisted = TestZone.nxdomain("unlisted")
        try await withJSONUpstreamAccount([
            "domains": ["mode": "listed", "allow": [.string(TestZone.www), "*.wild.example.test"], "deny": [.string(denied)]]
        ]) { servers, service in
            let client = service.client
            #expect(try await client.get("/v1/default/resolve?host=\(allowed)&type=A").json["ips"]?.strings == TestZone.wildV4)
            for name in [denied, unlisted, "wild.example.test", denied.uppercased()] {
                expectError(try await client.get("/v1/default/resolve?host=\(name)&type=A"), status: 403, code: "DomainNotAllowed")
            }
            // A batch refuses per host.
            let batch = try await client.get("/v1/default/resolve?host=\(TestZone.www),\(denied)&type=A")
            #expect(batch.status == 200)
            let results = try #require(batch.json["results"]?.array)
            #expect(Set(results[0]["ips"]?.strings ?? []) == Set(TestZone.wwwV4))
            #expect(results[1]["error"]?["code"]?.string == "DomainNotAllowed", "\(batch)")
            // EMAS: an empty answer, which its SDKs take as "use the system resolver".
            let emas = try await client.get("/default/d?host=\(denied)")
            #expect(emas.status == 200, "\(emas)")
            #expect(emas.json["host"]?.string == denied)
            #expect(emas.json["ips"]?.strings == [] && emas.json["ipsv6"]?.strings == [])
            #expect(emas.json["ttl"]?.int == 60)
            let emasBatch = try await client.get("/default/resolve?host=\(allowed),\(unlisted)")
            let answers = try #require(emasBatch.json["dns"]?.array, "\(emasBatch)")
            #expect(answers.map { $0["ips"]?.strings ?? ["?"] } == [TestZone.wildV4, []])
            // DoH JSON: Status 5 (REFUSED).
            let doh = try await client.get("/resolve?name=\(denied)&type=A")
            #expect(doh.status == 200 && doh.json["Status"]?.int == 5, "\(doh)")
            #expect(try await client.get("/resolve?name=\(allowed)&type=A").json["Status"]?.int == 0)
            // RFC 8484: RCODE 5 (REFUSED), whatever the type; through dnspython too.
            for type: UInt16 in [1, 28, 16] {
                let message = try await client.get("/dns-query?dns=\(try Self.dnsArgument(unlisted, type: type))")
                #expect(message.status == 200 && Self.rcode(message) == 5, "type \(type): \(message)")
            }
            let reply = try await DoHTestClient(url: "http://127.0.0.1:\(service.port)/dns-query").query(denied, type: "A", post: true)
            #expect(reply.rcode == "REFUSED" && reply.answer.isEmpty, "\(reply)")
            // Preload refuses per host; the cache lookup refuses too.
            let preload = try await client.post("/v1/default/preload", json: ["hosts": [.string(TestZone.www), .string(denied)]])
            let preloaded = try #require(preload.json["results"]?.array, "\(preload)")
            #expect(preloaded[0]["ok"]?.bool == true)
            #expect(preloaded[1]["ok"]?.bool == false)
            #expect(preloaded[1]["error"]?["code"]?.string == "DomainNotAllowed", "\(preload)")
            expectError(try await client.get("/v1/default/cache?host=\(denied)"), status: 403, code: "DomainNotAllowed")
            // The upstream was never asked for a refused name.
            for name in [denied, unlisted, "wild.example.test"] {
                #expect(try await servers.json.requests(for: name).isEmpty, "\(name) was asked upstream")
            }
        }
    }

    @Test func aNameCachedAndThenDeniedByAnAdminPutIsRefused() async throws {
        let name = TestZone.unique("later")
        try await withService(
            upstreams: { [$0.json.upstreamSpec] }, localDNSFallback: false,
            configure: { _, options in options.adminToken = Self.token }
        ) { servers, service in
            let client = service.client
            var account = loopbackAccount(servers, upstreams: [servers.json.upstreamSpec], ["localDNSFallback": false])
            #expect(try await client.put("/v1/accounts/tenant1", json: account, headers: Self.bearer).status == 201)
            #expect(try await client.get("/v1/tenant1/resolve?host=\(name)&type=A").json["source"]?.string == "upstream")
            let hit = try await client.get("/v1/tenant1/resolve?host=\(name)&type=A")
            #expect(hit.json["source"]?.string == "cache")
            #expect(try await client.get("/tenant1/d?host=\(name)").json["ips"]?.strings == TestZone.wildV4)
            #expect(try await servers.json.requests(for: name).count == 1)

            account = loopbackAccount(
                servers, upstreams: [servers.json.upstreamSpec], ["localDNSFallback": false, "domains": ["deny": [.string(name)]]])
            let put = try await client.put("/v1/accounts/tenant1", json: account, headers: Self.bearer)
            #expect(put.status == 200, "\(put)")
            #expect(put.json["config"]?["domains"]?["deny"]?.strings == [name], "\(put)")
            #expect(put.json["config"]?["domains"]?["mode"]?.string == "any")
            // Every format refuses the cached name; the other names still resolve.
            expectError(try await client.get("/v1/tenant1/resolve?host=\(name)&type=A"), status: 403, code: "DomainNotAllowed")
            #expect(try await client.get("/v1/tenant1/resolve?host=\(TestZone.www)&type=A").status == 200)
            #expect(try await client.get("/tenant1/d?host=\(name)").json["ips"]?.strings == [])
            #expect(try await client.get("/resolve?name=\(name)&uid=tenant1").json["Status"]?.int == 5)
            let message = try await client.get("/v1/tenant1/dns-query?dns=\(try Self.dnsArgument(name, type: 1))")
            #expect(Self.rcode(message) == 5, "\(message)")
            #expect(try await servers.json.requests(for: name).count == 1)
            // A bad pattern is refused naming it, and changes nothing.
            let bad = loopbackAccount(
                servers, upstreams: [servers.json.upstreamSpec],
                ["domains": ["mode": "listed", "allow": ["a.test", "b.test", "c.test", "*.*.test"]]])
            let refused = try await client.put("/v1/accounts/tenant1", json: bad, headers: Self.bearer)
            #expect(refused.status == 400)
            #expect(refused.json["error"]?["message"]?.string?.contains("domains.allow[3]") == true, "\(refused)")
            #expect(try await client.get("/v1/tenant1/resolve?host=\(TestZone.www)&type=A").status == 200)
        }
    }
}
