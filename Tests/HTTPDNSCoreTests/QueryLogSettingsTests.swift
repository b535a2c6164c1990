import Foundation
import Testing

@testable import HTTPDNSCore

/// The account key `queryLog`: defaults, validation naming the nested key, the round trip the
/// database and Redis replication carry, and the masking of client addresses.
@Suite struct QueryLogSettingsTests {
    @Test func theLogIsOffByDefaultAndWritesNoKey() {
        let config = AccountConfig()
        #expect(config.queryLog == QueryLogSettings())
        #expect(!config.queryLog.enabled)
        #expect(config.queryLog.sampleRate == 1)
        #expect(config.queryLog.retention == 86_400)
        #expect(config.queryLog.clientPrefixV4 == 24)
        #expect(config.queryLog.clientPrefixV6 == 56)
        #expect(config.jsonObject(redacted: false)["queryLog"] == nil)
    }

    @Test func accountJSONReadsTheKeyAndReadsBackItsOwnText() throws {
        let config = try AccountConfig(
            json: ["queryLog": ["enabled": true, "sampleRate": 0.25, "retention": 60, "clientPrefixV4": 16, "clientPrefixV6": 48]],
            base: .test(), path: "accounts.shop")
        #expect(config.queryLog.enabled && config.queryLog.sampleRate == 0.25 && config.queryLog.retention == 60)
        #expect(config.queryLog.clientPrefixV4 == 16 && config.queryLog.clientPrefixV6 == 48)
        let object = config.jsonObject(redacted: true)["queryLog"] as? [String: Any]
        #expect(object?["enabled"] as? Bool == true)
        #expect(object?["retention"] as? Int == 60)
        let text = try config.jsonText(redacted: false)
        #expect(try AccountConfig(json: parseJSONObject(Data(text.utf8), key: "t"), path: "x") == config)
        // Keys left out keep the base's values (an admin PUT of one key).
        let partial = try AccountConfig(json: ["queryLog": ["sampleRate": 0.5]], base: config, path: "x")
        #expect(partial.queryLog.enabled && partial.queryLog.retention == 60 && partial.queryLog.sampleRate == 0.5)
    }

    @Test func theReplicatedRecordCarriesTheLogSettings() throws {
        let config = AccountConfig.test {
            $0.queryLog.enabled = true
            $0.queryLog.retention = 120
        }
        let record = AccountRecord(id: "shop", version: 2, config: config)
        let read = try AccountRecord(decoding: record.encoded(), where: "redis")
        #expect(read == record)
        #expect(read.config?.queryLog.retention == 120)
    }

    @Test func accountJSONErrorsNameTheNestedKey() {
        let cases: [([String: Any], ConfigError)] = [
            (["sampleRate": 2], ConfigError(key: "accounts.shop.queryLog.sampleRate", "must be between 0.0 and 1.0, got 2.0")),
            (["enabled": "yes"], ConfigError(key: "accounts.shop.queryLog.enabled", "must be true or false")),
            (["retention": 0], ConfigError(key: "accounts.shop.queryLog.retention", "must be between 1 and 31536000, got 0")),
            (["clientPrefixV4": 33], ConfigError(key: "accounts.shop.queryLog.clientPrefixV4", "must be between 0 and 32, got 33")),
            (["clientPrefixV6": 129], ConfigError(key: "accounts.shop.queryLog.clientPrefixV6", "must be between 0 and 128, got 129")),
        ]
        for (queryLog, error) in cases {
            #expect(throws: error) { try AccountConfig(json: ["queryLog": queryLog], path: "accounts.shop") }
        }
        #expect(throws: ConfigError(key: "accounts.shop.queryLog", "must be a JSON object")) {
            try AccountConfig(json: ["queryLog": true], path: "accounts.shop")
        }
        #expect(throws: ConfigError.self) { try AccountConfig(json: ["queryLog": ["enable": true]], path: "accounts.shop") }
    }

    @Test func clientAddressesAreMaskedWithTheAccountsPrefixes() {
        var settings = QueryLogSettings()
        #expect(settings.maskedClient(IPAddress("198.51.100.77")!) == "198.51.100.0/24")
        #expect(settings.maskedClient(IPAddress("2001:db8:1234:5678::9")!) == "2001:db8:1234:5600::/56")
        #expect(settings.maskedClient(IPAddress("::ffff:192.0.2.7")!) == "192.0.2.0/24")
        settings.clientPrefixV4 = 20
        settings.clientPrefixV6 = 32
        #expect(settings.maskedClient(IPAddress("198.51.100.77")!) == "198.51.96.0/20")
        #expect(settings.maskedClient(IPAddress("2001:db8:1234:5678::9")!) == "2001:db8::/32")
        settings.clientPrefixV4 = 32
        #expect(settings.maskedClient(IPAddress("198.51.100.77")!) == "198.51.100.77/32")
    }

    @Test func theEngineLogsOnlyWhenTheKeyIsOnWithARateAboveZero() {
        #expect(!ResolverEngine.LookupOptions(AccountConfig()).logsQueries)
        var config = AccountConfig()
        config.queryLog.enabled = true
        #expect(ResolverEngine.LookupOptions(config).logsQueries)
        config.queryLog.sampleRate = 0
        #expect(!ResolverEngine.LookupOptions(config).logsQueries)
    }
}
