import Foundation
import Testing

@testable import HTTPDNSCore

/// An account's SDK behaviour options as read from JSON: defaults, validation naming the key,
/// round trip.
@Suite struct AccountOptionsTests {
    private func read(_ json: String) throws(ConfigError) -> AccountConfig {
        let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] ?? [:]
        return try AccountConfig(json: object, path: "accounts.shop")
    }

    private func error(_ json: String) -> ConfigError? {
        do {
            _ = try read(json)
            return nil
        } catch {
            return error
        }
    }

    @Test func defaults() {
        let config = AccountConfig()
        #expect(!config.reuseExpiredIPEnabled)
        #expect(config.maxStaleAge == 86_400)
        #expect(config.staleExcludeHosts.isEmpty)
        #expect(config.schedulePrefetchEnable)
        #expect(!config.speedTestEnable)
        #expect(config.speedPort == 0)
        #expect(config.speedTestTimeout == 1)
        #expect(!config.ispEnable)
        #expect(!config.shortEnable)
        #expect(config.minCacheTTL == 0)
        #expect(config.scheme == .https)
        #expect(!config.preResolveAfterNetworkChanged)
    }

    @Test func everyOptionIsRead() throws {
        let config = try read(
            """
            {"reuseExpiredIPEnabled":true,"maxStaleAge":600,"staleExcludeHosts":["Bank.Example",".pay.example"],
             "schedulePrefetchEnable":false,"speedTestEnable":true,"speedPort":443,"speedTestTimeout":0.5,
             "ispEnable":true,"shortEnable":true,"minCacheTTL":30,"scheme":"http","preResolveAfterNetworkChanged":true}
            """)
        #expect(config.reuseExpiredIPEnabled)
        #expect(config.maxStaleAge == 600)
        #expect(config.staleExcludeHosts.map(\.value) == ["bank.example", "pay.example"])
        #expect(!config.schedulePrefetchEnable)
        #expect(config.speedTestEnable && config.speedPort == 443 && config.speedTestTimeout == 0.5)
        #expect(config.ispEnable && config.shortEnable && config.preResolveAfterNetworkChanged)
        #expect(config.minCacheTTL == 30)
        #expect(config.scheme == .http)
    }

    @Test func schemeChangesOnlyTheDefaultUpstreams() throws {
        #expect(try read(#"{"scheme":"http"}"#).upstreams.map(\.url) == ["http://223.5.5.5/resolve", "http://223.6.6.6/resolve"])
        #expect(AccountConfig().upstreams.map(\.url) == ["https://223.5.5.5/resolve", "https://223.6.6.6/resolve"])
        let custom = try read(#"{"scheme":"http","upstreams":["doh:https://127.0.0.1:8053/dns-query"]}"#)
        #expect(custom.upstreams.map(\.description) == ["doh:https://127.0.0.1:8053/dns-query"])
    }

    @Test func badValuesNameTheirKey() {
        #expect(error(#"{"scheme":"ftp"}"#)?.key == "accounts.shop.scheme")
        #expect(error(#"{"speedPort":70000}"#)?.key == "accounts.shop.speedPort")
        #expect(error(#"{"staleExcludeHosts":["not a host"]}"#)?.key == "accounts.shop.staleExcludeHosts[0]")
        #expect(error(#"{"maxStaleAge":-1}"#)?.key == "accounts.shop.maxStaleAge")
        #expect(error(#"{"minCacheTTL":120,"maxCacheTTL":60}"#)?.key == "accounts.shop.minCacheTTL")
        #expect(error(#"{"ispEnable":"yes"}"#)?.key == "accounts.shop.ispEnable")
    }

    @Test func theJSONFormReadsBackEqual() throws {
        var config = AccountConfig.test()
        config.reuseExpiredIPEnabled = true
        config.staleExcludeHosts = [HostName("bank.example")!]
        config.speedPort = 8443
        config.minCacheTTL = 5
        config.scheme = .http
        let data = Data(try config.jsonText(redacted: false).utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(try AccountConfig(json: object, path: "x") == config)
    }

    @Test func minCacheTTLFloorsPositiveTTLsButNotNegativeOnes() {
        var config = AccountConfig.test()
        config.minCacheTTL = 60
        let positive = ResolverEngine.entry(
            for: UpstreamAnswer(addresses: ["192.0.2.1"], ttl: 5), source: .upstream, config: config, now: 0)
        #expect(positive.originTTL == 60)
        let negative = ResolverEngine.entry(
            for: UpstreamAnswer(addresses: [], ttl: nil, nxdomain: true, negativeTTL: 5), source: .upstream, config: config, now: 0)
        #expect(negative.originTTL == 5)
    }
}
