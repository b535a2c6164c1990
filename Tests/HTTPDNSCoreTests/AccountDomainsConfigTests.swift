import Foundation
import Testing

@testable import HTTPDNSCore

/// The account key `domains`: read, validated naming the nested key, and written back.
@Suite struct AccountDomainsConfigTests {
    @Test func accountJSONReadsValidatesAndWritesTheKey() throws {
        let config = try AccountConfig(
            json: ["domains": ["mode": "listed", "allow": ["www.example.com", "*.example.com"], "deny": ["ads.example.com"]]],
            base: .test(), path: "accounts.shop")
        #expect(config.domains.mode == .listed)
        #expect(!config.domains.allows(HostName("ads.example.com")!))
        let object = config.jsonObject(redacted: true)["domains"] as? [String: Any]
        #expect(object?["mode"] as? String == "listed")
        #expect(object?["allow"] as? [String] == ["www.example.com", "*.example.com"])
        #expect(object?["deny"] as? [String] == ["ads.example.com"])
        // Read back from its own text: what the database and Redis replication carry.
        let text = try config.jsonText(redacted: false)
        #expect(try AccountConfig(json: parseJSONObject(Data(text.utf8), key: "t"), path: "x") == config)
        // An account without a policy writes no `domains` key.
        #expect(AccountConfig().jsonObject(redacted: false)["domains"] == nil)
    }

    @Test func accountJSONErrorsNameTheNestedKey() {
        let cases: [([String: Any], ConfigError)] = [
            (["mode": "some"], ConfigError(key: "accounts.shop.domains.mode", "must be any or listed, got 'some'")),
            (
                ["mode": "listed", "allow": ["a.test", "b.test", "c.test", "x_y z"]],
                ConfigError(
                    key: "accounts.shop.domains.allow[3]",
                    "'x_y z' is not a host name or a wildcard of one (www.example.com, *.example.com)")
            ),
            (["deny": "ads.test"], ConfigError(key: "accounts.shop.domains.deny", "must be an array of strings")),
            (["deny": [1]], ConfigError(key: "accounts.shop.domains.deny[0]", "must be a string")),
        ]
        for (domains, error) in cases {
            #expect(throws: error) { try AccountConfig(json: ["domains": domains], path: "accounts.shop") }
        }
        #expect(throws: ConfigError(key: "accounts.shop.domains", "must be a JSON object")) {
            try AccountConfig(json: ["domains": ["a.test"]], path: "accounts.shop")
        }
        #expect(throws: ConfigError.self) { try AccountConfig(json: ["domains": ["allowed": []]], path: "accounts.shop") }
    }

    /// The record replicas share through Redis (and the database row) carries the list.
    @Test func theReplicatedRecordCarriesTheList() throws {
        let config = AccountConfig.test {
            $0.domains = try! DomainPolicy(mode: .listed, allow: ["*.example.com"], deny: ["ads.example.com"])
        }
        let record = AccountRecord(id: "shop", version: 4, config: config)
        let read = try AccountRecord(decoding: record.encoded(), where: "redis")
        #expect(read == record)
        #expect(read.config?.domains.allows(HostName("ads.example.com")!) == false)
        #expect(read.config?.domains.allows(HostName("www.example.com")!) == true)
    }
}
