import Foundation
import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSTestSupport
import Testing

/// `GET /v1/{account}/stats`: the SDK's statistics records (WIRE-FORMATS §4).
@Suite struct StatsHandlerTests {
    static let path = "/v1/default/stats"
    static let numberKeys = [
        "type", "successNum", "cacheDnsNum", "requestPDnsNum", "gobackLocaldnsNum", "localErro", "timeoutErro",
        "noResponseErro", "noPermissionErro", "urlParameterErro", "urlPathErro", "staleNum", "prefetchNum",
        "ruleNum",
    ]
    static let stringKeys = ["domain", "sp", "avgRtt", "maxRtt"]

    @Test func anAccountWithoutTrafficHasAnEmptyArray() {
        let fixture = ServiceFixture()
        let exchange = fixture.get(Self.path)
        #expect(exchange.status == 200)
        #expect((exchange.json as? [Any])?.isEmpty == true)
    }

    @Test func everyKeyIsPresentWithItsJSONType() throws {
        let fixture = ServiceFixture()
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.1"], ttl: 60)
        fixture.upstream.setReplyDelay(0.012)
        _ = fixture.get("/v1/default/resolve", ["host": "www.example.test"])
        let exchange = fixture.get(Self.path)
        #expect(exchange.status == 200)
        let records = try #require(exchange.json as? [[String: Any]])
        let record = try #require(records.first)
        #expect(Set(record.keys) == Set(Self.numberKeys + Self.stringKeys))
        // Types read from the raw text: JSONSerialization would turn "12" and 12 into lookalikes.
        let text = exchange.text
        for key in Self.numberKeys {
            #expect(text.range(of: "\"\(key)\":[0-9]+[,}]", options: .regularExpression) != nil, "\(key) is not a bare number in \(text)")
        }
        for key in Self.stringKeys {
            #expect(text.range(of: "\"\(key)\":\"[^\"]*\"", options: .regularExpression) != nil, "\(key) is not a string in \(text)")
        }
        #expect(record["avgRtt"] as? String == "12")
        #expect(record["maxRtt"] as? String == "12")
    }

    @Test func countersFollowMissesHitsAndFailures() throws {
        let fixture = ServiceFixture(config: .test { $0.localDNSFallback = true })
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.1"], ttl: 60)
        fixture.upstream.setFailure("slow.example.test", .aaaa, .timeout)
        fixture.fallback.setFailure("slow.example.test", .aaaa, .transport)
        _ = fixture.get("/v1/default/resolve", ["host": "www.example.test"])
        _ = fixture.get("/v1/default/resolve", ["host": "www.example.test"])
        _ = fixture.get("/v1/default/resolve", ["host": "www.example.test"])
        #expect(fixture.get("/v1/default/resolve", ["host": "slow.example.test", "type": "AAAA"]).status == 502)

        let records = try #require(fixture.get(Self.path).json as? [[String: Any]])
        let www = try #require(records.first { $0["domain"] as? String == "www.example.test" })
        #expect(number(www["type"]) == 1)
        #expect(www["sp"] as? String == "default")
        #expect(number(www["successNum"]) == 1)
        #expect(number(www["cacheDnsNum"]) == 2)
        #expect(number(www["requestPDnsNum"]) == 1)
        #expect(number(www["timeoutErro"]) == 0)
        let slow = try #require(records.first { $0["domain"] as? String == "slow.example.test" })
        #expect(number(slow["type"]) == 28)
        #expect(number(slow["successNum"]) == 0)
        #expect(number(slow["requestPDnsNum"]) == 1)
        #expect(number(slow["timeoutErro"]) == 1)
        #expect(number(slow["gobackLocaldnsNum"]) == 1)
        #expect(number(slow["localErro"]) == 1)
    }

    @Test func statsArePerAccount() throws {
        let fixture = ServiceFixture()
        fixture.registry.upsert("other", config: .test())
        fixture.upstream.setAnswer("www.example.test", addresses: ["127.0.0.1"], ttl: 60)
        _ = fixture.get("/v1/other/resolve", ["host": "www.example.test"])
        #expect((fixture.get(Self.path).json as? [Any])?.isEmpty == true)
        #expect((fixture.get("/v1/other/stats").json as? [Any])?.count == 1)
    }
}
