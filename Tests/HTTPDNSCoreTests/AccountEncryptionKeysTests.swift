import Foundation
import Testing

@testable import HTTPDNSCore

/// The account keys of encrypted client requests: `aesSecretKey` and `requireEncryption`.
struct AccountEncryptionKeysTests {
    static let key = "000102030405060708090A0B0C0D0E0F101112131415161718191a1b1c1d1e1f"

    @Test func aesSecretKeyIs64HexDigitsStoredLowerCaseAndGivesItsBytes() throws {
        let config = try AccountConfig(json: ["aesSecretKey": Self.key], path: "accounts.x")
        #expect(config.aesSecretKey == Self.key.lowercased())
        #expect(config.aesKey == Array(0..<32))
        #expect(!config.requireEncryption)
        #expect(AccountConfig().aesKey == nil)
    }

    @Test(arguments: [
        "", "***", String(repeating: "0", count: 63), String(repeating: "0", count: 65), String(repeating: "g", count: 64),
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",  // the same key in base64url: not accepted
        " " + String(repeating: "0", count: 63),
    ])
    func anythingElseIsRefusedWithAnErrorThatNamesTheKeyButNotTheValue(value: String) {
        #expect {
            try AccountConfig(json: ["aesSecretKey": value], path: "accounts.x")
        } throws: { error in
            let description = String(describing: error)
            return description.contains("accounts.x.aesSecretKey") && (value.isEmpty || !description.contains(value))
        }
    }

    @Test func requireEncryptionNeedsAKey() throws {
        #expect(throws: ConfigError.self) { try AccountConfig(json: ["requireEncryption": true], path: "accounts.x") }
        let config = try AccountConfig(json: ["requireEncryption": true, "aesSecretKey": Self.key], path: "accounts.x")
        #expect(config.requireEncryption)
        // Clearing the key of an account that requires encryption is refused too.
        #expect(throws: ConfigError.self) { try AccountConfig(json: ["aesSecretKey": NSNull()], base: config, path: "accounts.x") }
    }

    @Test func theKeyIsRedactedInOutputsAndKeptInTheStoredForm() throws {
        let config = try AccountConfig(json: ["aesSecretKey": Self.key, "requireEncryption": true], path: "accounts.x")
        #expect(config.jsonObject(redacted: true)["aesSecretKey"] as? String == "***")
        #expect(try !config.jsonText(redacted: true).contains(Self.key.lowercased()))
        #expect(config.jsonObject(redacted: true)["requireEncryption"] as? Bool == true)
        let stored = try JSONSerialization.jsonObject(with: Data(try config.jsonText(redacted: false).utf8)) as! [String: Any]
        let reloaded = try AccountConfig(json: stored, path: "accounts.x")
        #expect(reloaded.aesSecretKey == config.aesSecretKey)
        #expect(reloaded.requireEncryption)
        #expect(AccountConfig().jsonObject(redacted: false)["aesSecretKey"] == nil)
    }
}
