import Foundation
import HTTPDNSTestSupport
import Testing

@testable import HTTPDNSCore

/// `hostOverrides`: per-name TTL, no caching and stale bound, first matching rule top down.
@Suite struct HostOverridesTests {
    private func config(_ json: String) throws -> AccountConfig {
        try AccountConfig(json: parseJSONObject(Data(json.utf8), key: "t"), path: "accounts.shop")
    }

    private func refusal(_ json: String) -> String? {
        do {
            _ = try config(json)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func aRuleThatSetsNothingKeepsItsNamesFromTheRulesBelow() throws {
        let config = try config(#"{"hostOverrides":[{"hosts":["keep.example.com"]},{"hosts":["*.example.com"],"cache":false}]}"#)
        #expect(config.hostOverrides.rule(for: .valid("keep.example.com"))?.cache == true)
        #expect(config.hostOverrides.rule(for: .valid("other.example.com"))?.cache == false)
    }

    @Test func theFirstMatchingRuleApplies() throws {
        let config = try config(
            #"{"hostOverrides":[{"hosts":["api.example.com"],"ttl":5},{"hosts":["*.example.com","Example.COM."],"cache":false,"maxStaleAge":0}]}"#
        )
        let overrides = config.hostOverrides
        #expect(overrides.rule(for: .valid("api.example.com"))?.ttl == 5)
        #expect(overrides.rule(for: .valid("api.example.com"))?.cache == true)
        #expect(overrides.rule(for: .valid("img.cdn.example.com"))?.cache == false)
        #expect(overrides.rule(for: .valid("example.com"))?.maxStaleAge == 0)
        #expect(overrides.rule(for: .valid("example.org")) == nil)
        #expect(overrides.rules[1].hosts == ["*.example.com", "example.com"])
    }

    @Test func theRulesRoundTripThroughTheAccountsJSON() throws {
        let original = try config(#"{"hostOverrides":[{"hosts":["*.cdn.example.com"],"ttl":30,"cache":false,"maxStaleAge":0}]}"#)
        let text = try original.jsonText(redacted: false)
        #expect(text.contains(#""hostOverrides":[{"cache":false,"hosts":["*.cdn.example.com"],"maxStaleAge":0,"ttl":30}]"#))
        #expect(try config(text).hostOverrides == original.hostOverrides)
        #expect(try !AccountConfig().jsonText(redacted: false).contains("hostOverrides"))
    }

    @Test(arguments: [
        (#"{"hostOverrides":{"hosts":["a.example"]}}"#, "accounts.shop.hostOverrides: must be an array of objects"),
        (#"{"hostOverrides":[{"ttl":5}]}"#, "accounts.shop.hostOverrides[0].hosts: is required"),
        (#"{"hostOverrides":[{"hosts":[],"ttl":5}]}"#, "accounts.shop.hostOverrides[0].hosts: names no host"),
        (
            #"{"hostOverrides":[{"hosts":["ok.example"],"ttl":5},{"hosts":["ok.example","bad host"],"ttl":5}]}"#,
            "accounts.shop.hostOverrides[1].hosts[1]: 'bad host' is not a host name or a wildcard of one"
        ),
        (#"{"hostOverrides":[{"hosts":["a.example"],"ttl":-1}]}"#, "accounts.shop.hostOverrides[0].ttl: must be between 0 and 604800"),
        (#"{"hostOverrides":[{"hosts":["a.example"],"tll":5}]}"#, "accounts.shop.hostOverrides[0]"),
    ])
    func aBadRuleIsRefusedNamingItsKey(json: String, expected: String) {
        let message = refusal(json)
        #expect(message?.contains(expected) == true, "\(message ?? "accepted")")
    }

    @Test func aTTLRuleSetsAPositiveAnswersTTLAndCapsANegativeOnes() {
        var config = AccountConfig()
        config.minCacheTTL = 60
        let rule = HostOverrides.Rule(hosts: ["a.example"], ttl: 10)
        let positive = ResolverEngine.entry(
            for: UpstreamAnswer(addresses: ["192.0.2.1"], ttl: 300), source: .upstream, config: config, override: rule, now: 0)
        #expect(positive.originTTL == 10)
        let negative = ResolverEngine.entry(
            for: UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true, negativeTTL: 25), source: .upstream, config: config,
            override: rule, now: 0)
        #expect(negative.originTTL == 10)
        let without = ResolverEngine.entry(
            for: UpstreamAnswer(addresses: ["192.0.2.1"], ttl: 300), source: .upstream, config: config, now: 0)
        #expect(without.originTTL == 300)
    }

    @Test func anAnswerOfANameNotToBeCachedAsksTheUpstreamEachTime() throws {
        let fixture = EngineFixture(
            config: .test { $0.hostOverrides = try! HostOverrides([.init(hosts: ["live.example"], cache: false)]) })
        for host in ["live.example", "other.example"] {
            fixture.upstream.setAnswer(host, addresses: ["192.0.2.1"], ttl: 300)
            #expect(!fixture.resolve(host).fromCache)
        }
        let again = fixture.resolve("live.example")
        #expect(!again.fromCache)
        #expect(again.answer?.addresses == ["192.0.2.1"])
        #expect(fixture.upstream.calls("live.example") == 2)
        #expect(fixture.resolve("other.example").fromCache)
        #expect(fixture.upstream.calls("other.example") == 1)
    }

    @Test func aNamesMaxStaleAgeBoundsItsStaleAnswersInsteadOfTheAccounts() {
        let fixture = EngineFixture(
            config: .test {
                $0.reuseExpiredIPEnabled = true
                $0.localDNSFallback = false
                $0.maxStaleAge = 3600
                $0.hostOverrides = try! HostOverrides([
                    .init(hosts: ["strict.example"], maxStaleAge: 0), .init(hosts: ["*.loose.example"], maxStaleAge: 7200),
                ])
            })
        for host in ["strict.example", "a.loose.example", "plain.example"] {
            fixture.upstream.setAnswer(host, addresses: ["192.0.2.1"], ttl: 30)
            _ = fixture.resolve(host)
            fixture.upstream.setFailure(host, .a, .timeout)
        }
        fixture.clock.advance(by: 31)
        #expect(fixture.resolve("strict.example").failure?.timedOut == true)
        #expect(fixture.resolve("plain.example").answer?.stale == true)
        fixture.clock.advance(by: 5000)
        #expect(fixture.resolve("a.loose.example").answer?.stale == true)
        #expect(fixture.resolve("plain.example").answer?.stale != true)
    }
}
