import Foundation
import Testing

@testable import HTTPDNSCore

@Suite struct AccountConfigTests {
    private func withSecrets() -> AccountConfig {
        var config = AccountConfig.test()
        config.accessKeyId = "AKID-visible"
        config.accessKeySecret = "very-secret-value"
        config.secretKey = "another-secret-value"
        config.aesSecretKey = String(repeating: "ab", count: 32)
        return config
    }

    @Test func redactedJSONHidesSecretsButKeepsTheKeyID() throws {
        let object = withSecrets().jsonObject(redacted: true)
        #expect(object["accessKeyId"] as? String == "AKID-visible")
        #expect(object["accessKeySecret"] as? String == "***")
        #expect(object["secretKey"] as? String == "***")

        let text = try withSecrets().jsonText(redacted: true)
        #expect(!text.contains("very-secret-value"))
        #expect(!text.contains("another-secret-value"))
        #expect(text.contains("AKID-visible"))
    }

    @Test func unredactedJSONCarriesTheSecrets() {
        let object = withSecrets().jsonObject(redacted: false)
        #expect(object["accessKeySecret"] as? String == "very-secret-value")
        #expect(object["secretKey"] as? String == "another-secret-value")
    }

    @Test func absentSecretsAreAbsentKeys() {
        let object = AccountConfig.test().jsonObject(redacted: true)
        #expect(object["accessKeyId"] == nil)
        #expect(object["accessKeySecret"] == nil)
        #expect(object["secretKey"] == nil)
    }

    @Test func jsonTextNamesEveryKnownKeyAndReadsBackEqual() throws {
        var config = withSecrets()
        config.upstreams = [
            UpstreamSpec(kind: .doh, url: "http://127.0.0.1:8053/dns-query"), UpstreamSpec(kind: .json, url: "https://127.0.0.1/resolve"),
        ]
        config.maxCacheTTL = 77
        config.maxNegativeCache = 0
        config.timeout = 1.25
        config.ipv6Enable = true
        config.cacheCountLimit = 12
        config.discardRecordsHasExpiredFor = 10.5
        // Optional keys appear when set (rateLimit, rateBurst: unset means the service's value).
        config.rateLimit = 12.5
        config.rateBurst = 30
        config.upstreamQPS = 40
        // So does `domains` (unset: every name).
        config.domains = try DomainPolicy(mode: .listed, allow: ["*.example.com"], deny: ["ads.example.com"])
        config.hostOverrides = try HostOverrides([.init(hosts: ["*.cdn.example.com"], ttl: 30, cache: false, maxStaleAge: 0)])
        config.dns64Prefix = DNS64Prefix("64:ff9b::/96")
        // And `queryLog` (unset: off).
        config.queryLog.enabled = true
        var rule = AnswerRule(name: "r", hosts: ["www.example.com"])
        rule.answer.ipv4 = [IPAddress("192.0.2.1")!]
        config.rules = try AnswerRules([rule])

        let text = try config.jsonText(redacted: false)
        #expect(text.contains("http://127.0.0.1:8053/dns-query"))  // slashes not escaped
        let object = try parseJSONObject(Data(text.utf8), key: "test")
        #expect(Set(object.keys) == AccountConfig.keys)
        #expect(try AccountConfig(json: object, path: "accounts.x") == config)
    }

    @Test func jsonOverlaysOnlyThePresentKeysOntoTheBase() throws {
        var base = AccountConfig.test()
        base.maxCacheTTL = 500
        base.accessKeySecret = "kept"
        let config = try AccountConfig(json: ["timeout": 2, "ipv6Enable": true], base: base, path: "accounts.x")
        #expect(config.timeout == 2)
        #expect(config.ipv6Enable)
        #expect(config.maxCacheTTL == 500)
        #expect(config.accessKeySecret == "kept")
        #expect(config.upstreams == base.upstreams)
    }

    @Test func nullIsRefusedNamingTheKeyEvenForASecret() throws {
        var base = AccountConfig.test()
        base.secretKey = "old"
        for key in ["secretKey", "timeout", "upstreams", "clientKeys"] {
            #expect(throws: ConfigError(key: "accounts.x.\(key)", "is null: give a value, or leave the key out for its default")) {
                try AccountConfig(json: [key: NSNull()], base: base, path: "accounts.x")
            }
        }
    }

    @Test func timeoutIsRoundedToWholeMilliseconds() {
        var config = AccountConfig()
        config.timeout = 0.0505
        #expect(config.timeoutMilliseconds == 51)
        config.timeout = 3
        #expect(config.timeoutMilliseconds == 3000)
    }

    @Test func localDNSServersAreTrimmedAndChecked() throws {
        #expect(
            try AccountConfig.validateServers([" 127.0.0.1:53 ", "[::1]:5353", "127.0.0.2"], key: "k") == [
                "127.0.0.1:53", "[::1]:5353", "127.0.0.2",
            ])
        #expect(throws: ConfigError(key: "k[1]", "'' is not an IP address with an optional port (127.0.0.1, 127.0.0.1:53, ::1, [::1]:53)"))
        {
            try AccountConfig.validateServers(["127.0.0.1:53", ""], key: "k")
        }
        for bad in ["not-an-address", "resolver.example:53", "127.0.0.1:0", "127.0.0.1:65536", "[127.0.0.1]:53", "::1:53x", "[::1]"] {
            #expect(throws: ConfigError.self, "\(bad)") { try AccountConfig.validateServers([bad], key: "k") }
        }
        #expect(throws: ConfigError.self) { try AccountConfig.validateServers(["udp://127.0.0.1"], key: "k") }
        #expect(throws: ConfigError.self) { try AccountConfig.validateServers(["127.0.0.1 53"], key: "k") }
    }

    @Test func upstreamSpecRoundTripsThroughItsDescription() throws {
        for text in ["json:https://223.5.5.5/resolve", "doh:http://127.0.0.1:8053/dns-query", "httpdns:http://[::1]:9000/d"] {
            let spec = try UpstreamSpec(parsing: text, key: "k")
            #expect(spec.description == text)
        }
        #expect(
            try UpstreamSpec(parsing: "doh:http://127.0.0.1:8053/dns-query", key: "k")
                == UpstreamSpec(kind: .doh, url: "http://127.0.0.1:8053/dns-query"))
    }
}

/// The JSON text the database keeps is never a stand-in for a configuration it could not write.
@Suite struct AccountConfigJSONTextTests {
    @Test func aConfigurationThatCannotBeWrittenAsJSONThrowsInsteadOfGivingAnEmptyObject() {
        var config = AccountConfig()
        config.maxStaleAge = .infinity  // not representable in JSON
        #expect(throws: ConfigError.self) { try config.jsonText(redacted: false) }
    }
}
