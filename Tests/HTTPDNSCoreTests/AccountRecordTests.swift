import HTTPDNSCore
import Testing

@Suite struct AccountRecordTests {
    /// A live record and a tombstone read back as they were written, secrets included: the
    /// record is what replicas share, so a client key or `aesSecretKey` must replicate.
    @Test func recordsRoundTripWithTheirSecrets() throws {
        let config = AccountConfig.test {
            $0.clientKeys = [ClientKey(id: "app", secret: "0123456789abcdef0123", role: .manage)]
            $0.aesSecretKey = String(repeating: "ab", count: 32)
            $0.maxCacheTTL = 600
        }
        for record in [AccountRecord(id: "shop", version: 7, config: config), AccountRecord(id: "shop", version: 8, config: nil)] {
            let text = try record.encoded()
            #expect(text.hasPrefix("{\"version\":\(record.version),\"id\":\"shop\","))
            #expect(try AccountRecord(decoding: text, where: "redis") == record)
        }
        let text = try AccountRecord(id: "shop", version: 7, config: config).encoded()
        #expect(text.contains("0123456789abcdef0123"))
        #expect(text.contains(String(repeating: "ab", count: 32)))
    }

    /// Redis's write script puts `{"version":N,` in front of `body()`: that is the whole record.
    @Test func theBodyCompletedWithAVersionIsTheRecord() throws {
        let record = AccountRecord(id: "a-1", version: 42, config: .test())
        #expect("{\"version\":42," + (try record.body()) == (try record.encoded()))
    }

    /// A database row written without Redis holds a bare configuration: version 0. A row holding
    /// a record is read as that record, and must be the row's own account.
    @Test func storedRowsAreRecordsOrBareConfigurations() throws {
        let config = AccountConfig.test { $0.maxCacheTTL = 120 }
        let bare = try AccountRecord.stored(id: "shop", json: config.jsonText(redacted: false))
        #expect(bare.version == 0 && bare.config == config && bare.id == "shop")
        let record = AccountRecord(id: "shop", version: 3, config: nil)
        #expect(try AccountRecord.stored(id: "shop", json: record.encoded()) == record)
        #expect(throws: ConfigError.self) { try AccountRecord.stored(id: "other", json: record.encoded()) }
    }

    /// Damaged or foreign records are refused with an error that names where they came from and
    /// never quotes the text (it holds secrets).
    @Test(arguments: [
        "{\"version\":-1,\"id\":\"a\",\"deleted\":true}",
        "{\"version\":1.5,\"id\":\"a\",\"deleted\":true}",
        "{\"version\":true,\"id\":\"a\",\"deleted\":true}",
        "{\"version\":1,\"id\":\"a b\",\"deleted\":true}",
        "{\"version\":1,\"id\":\"a\"}",
        "{\"version\":1,\"id\":\"a\",\"deleted\":false}",
        "{\"version\":1,\"id\":\"a\",\"deleted\":true,\"config\":{}}",
        "{\"version\":1,\"id\":\"a\",\"deleted\":true,\"extra\":1}",
        "{\"version\":1,\"id\":\"a\",\"config\":{\"aesSecretKey\":\"SECRETSECRET\"}}",
        "{\"id\":\"a\",\"deleted\":true}",
        "[1]",
    ])
    func badRecordsAreRefused(text: String) {
        #expect {
            try AccountRecord(decoding: text, where: "redis")
        } throws: { error in
            let description = "\(error)"
            return description.hasPrefix("redis account record") && !description.contains("SECRETSECRET")
        }
    }
}
