import Foundation
import HTTPDNSTestSupport
import HTTPDNSWire
import Testing

/// An account's `dns64Prefix` against the real binary, unbound (through dnss) on loopback and
/// clients nobody here wrote (dnspython over RFC 8484 and plain DNS): an AAAA question for an
/// A-only name (`v4only`: one A, TTL 300, no AAAA; the zone's SOA MINIMUM is 45) is answered
/// with the A address under the prefix in every wire format, marked in v1 and DoH JSON, from a
/// miss and from the cache; a name with AAAA records and a name that does not exist keep their
/// answers.
@Suite("DNS64")
struct DNS64IntegrationTests {
    /// 127.0.0.21 under 64:ff9b::/96.
    static let synthesized = "64:ff9b::7f00:15"

    @Test func anAAAAQuestionForAnAOnlyNameIsSynthesizedInEveryFormat() async throws {
        try await withService(
            configure: { servers, options in
                options.listen("--dns-listen", port: "dns")
                options.config = ["accounts": ["default": loopbackAccount(servers, ["dns64Prefix": "64:ff9b::/96"])]]
            }
        ) { _, service in
            let client = service.client
            // v1: a miss, then a hit; both marked, the TTL capped by the SOA's MINIMUM (RFC 6147 §5.1.7).
            for source in ["upstream", "cache"] {
                let answer = try await client.get("/v1/default/resolve?host=\(TestZone.v4Only)&type=AAAA")
                #expect(answer.json["ipsv6"]?.strings == [Self.synthesized], "\(answer)")
                #expect(answer.json["dns64"]?.bool == true && answer.json["source"]?.string == source, "\(answer)")
                #expect(answer.json["origin_ttl"]?.int == Int(TestZone.soaMinimum), "\(answer)")
                #expect(answer.json["nodata"] == nil, "\(answer)")
            }
            let both = try await client.get("/v1/default/resolve?host=\(TestZone.v4Only)&type=both")
            #expect(both.json["ips"]?.strings == TestZone.v4OnlyV4 && both.json["ipsv6"]?.strings == [Self.synthesized], "\(both)")
            #expect(both.json["dns64"]?.bool == true)
            // A name with AAAA records keeps them, unmarked; a name that does not exist stays so.
            let www = try await client.get("/v1/default/resolve?host=\(TestZone.www)&type=AAAA")
            #expect(www.json["ipsv6"]?.strings == TestZone.wwwV6 && www.json["dns64"] == nil, "\(www)")
            let missing = try await client.get("/v1/default/resolve?host=\(TestZone.nxdomain("dns64"))&type=AAAA")
            #expect(missing.json["nxdomain"]?.bool == true && missing.json["ipsv6"]?.strings == [], "\(missing)")
            // EMAS, one name and a batch.
            let emas = try await client.get("/default/d?host=\(TestZone.v4Only)&query=6")
            #expect(emas.json["ipsv6"]?.strings == [Self.synthesized], "\(emas)")
            let batch = try await client.get("/default/resolve?host=\(TestZone.v4Only),\(TestZone.www)&query=4,6")
            let answers = try #require(batch.json["dns"]?.array, "\(batch)")
            #expect(answers.map { $0["ipsv6"]?.strings ?? [] } == [[Self.synthesized], TestZone.wwwV6], "\(batch)")
            // DoH JSON: AAAA records (type 28), marked.
            let doh = try await client.get("/resolve?name=\(TestZone.v4Only)&type=AAAA")
            #expect(doh.json["Status"]?.int == 0 && doh.json["DNS64"]?.bool == true, "\(doh)")
            let records = try #require(doh.json["Answer"]?.array, "\(doh)")
            #expect(records.map { $0["data"]?.string } == [Self.synthesized] && records.allSatisfy { $0["type"]?.int == 28 })
            // RFC 8484 through dnspython (GET and POST), and plain DNS over UDP and TCP.
            let doH = DoHTestClient(url: "http://127.0.0.1:\(service.port)/dns-query")
            for post in [false, true] {
                let reply = try await doH.query(TestZone.v4Only, type: "AAAA", post: post)
                #expect(reply.rcode == "NOERROR" && reply.answer.map(\.data) == [Self.synthesized], "\(reply)")
                #expect(reply.answer.allSatisfy { $0.type == "AAAA" && $0.ttl <= Int(TestZone.soaMinimum) })
            }
            let dns = PlainDNSTestClient(port: try service.port(named: "dns"))
            for tcp in [false, true] {
                let replies = try await dns.ask(["\(TestZone.v4Only)/AAAA", "\(TestZone.v4Only)/A"], tcp: tcp)
                #expect(replies[0].rcode == "NOERROR" && replies[0].answer.map(\.data) == [Self.synthesized], "\(replies)")
                #expect(replies[1].answer.map(\.data) == TestZone.v4OnlyV4, "\(replies)")
            }
        }
    }

    @Test func anAccountWithoutAPrefixAnswersNoData() async throws {
        try await withService { _, service in
            let answer = try await service.client.get("/v1/default/resolve?host=\(TestZone.v4Only)&type=AAAA")
            #expect(answer.json["ipsv6"]?.strings == [] && answer.json["nodata"]?.bool == true && answer.json["dns64"] == nil, "\(answer)")
        }
    }
}
