import Foundation
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// The account key `rules`: read and validated naming the key, indexed by host, matched top down
/// with AND-ed conditions, and answered in weighted order.
@Suite struct AnswerRulesTests {
    static var canary: [String: Any] {
        [
            "name": "canary-v2", "hosts": ["api.example.com", "*.canary.example.com"],
            "when": ["networks": ["10.0.0.0/8", "2001:db8::/32"], "params": ["appver": "2.*"]],
            "answer": ["ipv4": ["192.0.2.10", "192.0.2.11"], "ipv6": ["2001:db8::10"], "weights": [3, 1], "ttl": 30],
            "extra": "canary",
        ]
    }

    static func rules(_ list: [[String: Any]]) throws(ConfigError) -> AnswerRules {
        try AccountConfig(json: ["rules": list], path: "accounts.shop").rules
    }

    static func client(_ address: String?, _ params: [String: String] = [:]) -> RuleClient {
        RuleClient(address: address.flatMap(IPAddress.init), params: params)
    }

    @Test func accountJSONReadsWritesAndReplicatesTheKey() throws {
        let config = try AccountConfig(json: ["rules": [Self.canary]], base: .test(), path: "accounts.shop")
        let rule = try #require(config.rules.rules.first)
        #expect(rule.name == "canary-v2")
        #expect(rule.answer.weights == [3, 1])
        #expect(rule.answer.ttl == 30)
        #expect(rule.extra == "canary")
        let text = try config.jsonText(redacted: true)
        #expect(try AccountConfig(json: parseJSONObject(Data(text.utf8), key: "t"), path: "x") == config)
        let record = AccountRecord(id: "shop", version: 2, config: config)
        #expect(try AccountRecord(decoding: record.encoded(), where: "redis").config?.rules == config.rules)
        #expect(AccountConfig().jsonObject(redacted: false)["rules"] == nil)
    }

    @Test func errorsNameTheKeyPath() {
        func rule(_ change: (inout [String: Any]) -> Void) -> [String: Any] {
            var rule = Self.canary
            change(&rule)
            return rule
        }
        func answer(_ answer: [String: Any]) -> [String: Any] { rule { $0["answer"] = answer } }
        let cases: [([[String: Any]], String, String)] = [
            ([answer(["ipv4": ["192.0.2.1"], "weights": [1, 2]])], "rules[0].answer.weights", "has 2 weights for 1 addresses"),
            ([rule { $0["when"] = ["networks": ["10.1.0.0/8"]] }], "rules[0].when.networks[0]", "is not a network"),
            ([rule { $0["when"] = ["colour": ["red"]] }], "rules[0].when.colour", "is not a condition"),
            ([answer(["ttl": 30])], "rules[0].answer", "is empty"),
            ([Self.canary, Self.canary], "rules[1].name", "is the name of rules[0] too"),
            ([rule { $0["name"] = "bad name{}" }], "rules[0].name", "is not a rule name"),
            ([answer(["ipv4": ["2001:db8::1"]])], "rules[0].answer.ipv4[0]", "is not an ipv4 address"),
            ([rule { $0["hosts"] = ["a b"] }], "rules[0].hosts[0]", "is not a host name"),
            ([rule { $0["when"] = ["countries": ["China"]] }], "rules[0].when.countries[0]", "is not a code"),
            ([rule { $0["when"] = ["asns": [0]] }], "rules[0].when.asns[0]", "AS number"),
            ([rule { $0["when"] = ["params": ["bad name": "1"]] }], "rules[0].when.params.bad name", "argument name"),
            ([answer(["ipv4": (0..<33).map { "192.0.2.\($0)" }])], "rules[0].answer.ipv4", "at most 32"),
            ([rule { $0["extra"] = "a\nb" }], "rules[0].extra", "control characters"),
            ([answer(["ipv4": ["192.0.2.1"], "healthCheck": ["port": 0]])], "rules[0].answer.healthCheck.port", "between 1 and 65535"),
        ]
        for (list, key, message) in cases {
            do throws(ConfigError) {
                _ = try Self.rules(list)
                Issue.record("no error for \(key)")
            } catch {
                #expect(error.key == "accounts.shop.\(key)")
                #expect(error.message.contains(message), "\(error.message)")
            }
        }
        let many = (0...AnswerRules.maximumRules).map { index in rule { $0["name"] = "r\(index)" } }
        #expect(throws: ConfigError.self) { try Self.rules(many) }
    }

    @Test func rulesAreTriedInOrderAndConditionsAreAndedWithListsOred() throws {
        let rules = try Self.rules([
            Self.canary,
            ["name": "office", "hosts": ["*.example.com"], "when": ["networks": ["192.168.0.0/16"]], "answer": ["ipv4": ["192.0.2.20"]]],
            ["name": "all", "hosts": ["api.example.com"], "answer": ["ipv4": ["192.0.2.30"]]],
        ])
        let api = HostName("api.example.com")!
        #expect(rules.candidates(for: api) == [0, 1, 2])
        #expect(rules.firstMatch(host: api, client: Self.client("10.1.2.3", ["appver": "2.4.1"]))?.name == "canary-v2")
        #expect(rules.firstMatch(host: api, client: Self.client("2001:db8::7", ["appver": "2.0"]))?.name == "canary-v2")
        // One condition fails: the next rule is tried.
        #expect(rules.firstMatch(host: api, client: Self.client("10.1.2.3", ["appver": "1.9"]))?.name == "all")
        #expect(rules.firstMatch(host: api, client: Self.client("10.1.2.3"))?.name == "all")
        #expect(rules.firstMatch(host: api, client: Self.client("192.168.4.5", ["appver": "2.1"]))?.name == "office")
        // A wildcard names what lies below its parent, not the parent.
        #expect(rules.firstMatch(host: HostName("x.canary.example.com")!, client: Self.client("10.0.0.1", ["appver": "2"])) == nil)
        #expect(
            rules.firstMatch(host: HostName("x.canary.example.com")!, client: Self.client("10.0.0.1", ["appver": "2."]))?.name
                == "canary-v2")
        #expect(rules.candidates(for: HostName("canary.example.com")!) == [1])
        #expect(rules.candidates(for: HostName("example.com")!) == [])
        #expect(rules.firstMatch(host: HostName("www.example.org")!, client: Self.client("10.0.0.1")) == nil)
        var name = "API.Example.com."
        #expect(name.withUTF8 { rules.covers(UnsafeRawBufferPointer($0)) })
        name = "example.com"
        #expect(!name.withUTF8 { rules.covers(UnsafeRawBufferPointer($0)) })
    }

    @Test func explainSaysWhichConditionFailed() throws {
        let rules = try Self.rules([Self.canary, ["name": "all", "hosts": ["api.example.com"], "answer": ["ipv4": ["192.0.2.30"]]]])
        let steps = rules.explain(host: HostName("api.example.com")!, client: Self.client("10.1.2.3", ["appver": "1.0"]))
        #expect(steps.map(\.rule.name) == ["canary-v2", "all"])
        #expect(steps.map(\.matched) == [false, true])
        #expect(steps[0].reason == "params.appver failed: sdns-appver '1.0' matches none of '2.*'")
        #expect(steps[1].reason == "no conditions: matches every request")
    }

    @Test func geoConditionsNeedWhatTheDatabasesSay() throws {
        let rules = try Self.rules([
            [
                "name": "zj", "hosts": ["a.test"], "when": ["countries": ["cn"], "regions": ["CN-ZJ"], "asns": [4134]],
                "answer": ["ipv4": ["192.0.2.1"]],
            ]
        ])
        let host = HostName("a.test")!
        var client = Self.client("127.0.0.1")
        #expect(rules.firstMatch(host: host, client: client) == nil)
        client.geo = GeoRecord(country: "CN", regions: ["CN-ZJ"], asn: 4134)
        #expect(rules.firstMatch(host: host, client: client)?.name == "zj")
        client.geo?.asn = 4837
        #expect(rules.firstMatch(host: host, client: client) == nil)
    }

    @Test func globsMatchAnyRun() {
        #expect(Glob.matches("2.*", "2.1.3"))
        #expect(Glob.matches("*", ""))
        #expect(Glob.matches("a*b*c", "aXXbYbc"))
        #expect(!Glob.matches("2.*", "12.1"))
        #expect(!Glob.matches("a*b", "acbx"))
        #expect(Glob.matches("exact", "exact"))
    }

    /// 2 000 answers of weights 6:3:1 put each address first in proportion to its weight (within
    /// 3 points), with a seeded source, and every answer holds every address once.
    @Test func weightsOrderAddressesInProportion() throws {
        var answer = AnswerRule.Answer()
        answer.ipv4 = ["192.0.2.1", "192.0.2.2", "192.0.2.3"].map { IPAddress($0)! }
        answer.weights = [6, 3, 1]
        var random = SplitMix64(seed: 25)
        var first: [IPAddress: Int] = [:]
        for _ in 0..<2000 {
            let order = answer.ordered(.a, using: &random)
            #expect(Set(order) == Set(answer.ipv4) && order.count == 3)
            first[order[0], default: 0] += 1
        }
        #expect(abs(Double(first[answer.ipv4[0]]!) / 2000 - 0.6) < 0.03)
        #expect(abs(Double(first[answer.ipv4[1]]!) / 2000 - 0.3) < 0.03)
        #expect(abs(Double(first[answer.ipv4[2]]!) / 2000 - 0.1) < 0.03)
        // Without weights, the order given.
        answer.weights = []
        #expect(answer.ordered(.a, using: &random) == answer.ipv4)
        #expect(answer.ordered(.aaaa, using: &random) == [])
    }

    @Test func unusableAddressesAreLeftOutButNeverAll() {
        var answer = AnswerRule.Answer()
        answer.ipv4 = ["192.0.2.1", "192.0.2.2"].map { IPAddress($0)! }
        var random = SplitMix64(seed: 1)
        #expect(answer.ordered(.a, using: &random) { $0 != answer.ipv4[0] } == [answer.ipv4[1]])
        #expect(answer.ordered(.a, using: &random) { _ in false } == answer.ipv4)
    }
}
