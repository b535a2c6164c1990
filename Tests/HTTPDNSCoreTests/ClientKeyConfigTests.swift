import Foundation
import Testing

@testable import HTTPDNSCore

/// `clientKeys`, `requireSignedRequests` and `maxSignatureAge`: parsing, validation errors that
/// name the key, redaction, and the `***` round trip of an admin GET then PUT.
@Suite struct ClientKeyConfigTests {
    private let secretA = "client-secret-aaaa-0001"
    private let secretB = "client-secret-bbbb-0002"

    private func parse(_ object: [String: Any], allowingRedacted: Bool = false) throws(ConfigError) -> AccountConfig {
        try AccountConfig(json: object, path: "accounts.x", allowingRedacted: allowingRedacted)
    }

    private func keys(_ items: [[String: String]]) -> [String: Any] { ["clientKeys": items] }

    @Test func keysAreReadWithTheirRoles() throws {
        let config = try parse([
            "clientKeys": [["id": "k1", "secret": secretA, "role": "resolve"], ["id": "k2", "secret": secretB, "role": "manage"]],
            "requireSignedRequests": true, "maxSignatureAge": 120,
        ])
        #expect(
            config.clientKeys == [
                ClientKey(id: "k1", secret: secretA, role: .resolve), ClientKey(id: "k2", secret: secretB, role: .manage),
            ])
        #expect(config.requireSignedRequests)
        #expect(config.maxSignatureAge == 120)
    }

    @Test func defaultsAreOpenWithTenMinuteSignatures() {
        let config = AccountConfig()
        #expect(config.clientKeys.isEmpty)
        #expect(!config.requireSignedRequests)
        #expect(config.maxSignatureAge == 600)
    }

    @Test(arguments: [
        ([["id": "k1", "secret": "short-secret", "role": "resolve"]], "accounts.x.clientKeys[0].secret"),
        // 15 characters are refused even when their bytes are more than 16; 257 are too many.
        ([["id": "k1", "secret": String(repeating: "é", count: 15), "role": "resolve"]], "accounts.x.clientKeys[0].secret"),
        ([["id": "k1", "secret": String(repeating: "s", count: 257), "role": "resolve"]], "accounts.x.clientKeys[0].secret"),
        (
            [
                ["id": "k1", "secret": "client-secret-aaaa-0001", "role": "resolve"],
                ["id": "k1", "secret": "client-secret-bbbb-0002", "role": "manage"],
            ],
            "accounts.x.clientKeys[1].id"
        ),
        (
            [
                ["id": "k1", "secret": "client-secret-aaaa-0001", "role": "resolve"],
                ["id": "bad id", "secret": "client-secret-bbbb-0002", "role": "manage"],
            ],
            "accounts.x.clientKeys[1].id"
        ),
        (
            [["id": String(repeating: "k", count: 65), "secret": "client-secret-aaaa-0001", "role": "resolve"]],
            "accounts.x.clientKeys[0].id"
        ),
        ([["id": "k1", "secret": "client-secret-aaaa-0001", "role": "admin"]], "accounts.x.clientKeys[0].role"),
        ([["id": "k1", "secret": "client-secret-aaaa-0001"]], "accounts.x.clientKeys[0].role"),
        ([["secret": "client-secret-aaaa-0001", "role": "resolve"]], "accounts.x.clientKeys[0].id"),
        ([["id": "k1", "role": "resolve"]], "accounts.x.clientKeys[0].secret"),
        ([["id": "k1", "secret": "client-secret-aaaa-0001", "role": "resolve", "extra": "x"]], "accounts.x.clientKeys[0].extra"),
        ([["id": "k1", "secret": "***", "role": "resolve"]], "accounts.x.clientKeys[0].secret"),
    ])
    func invalidKeysAreRefusedNamingTheKey(items: [[String: String]], key: String) {
        #expect(throws: ConfigError.self) { try parse(keys(items)) }
        do {
            _ = try parse(keys(items))
        } catch {
            #expect(error.key == key)
            #expect(!error.description.contains("client-secret"), "an error must not echo a secret: \(error)")
        }
    }

    @Test func requiringSignaturesWithoutKeysIsRefused() {
        #expect(throws: ConfigError(key: "accounts.x.requireSignedRequests", "is true but clientKeys is empty: no request could be served"))
        {
            try parse(["requireSignedRequests": true])
        }
    }

    @Test(arguments: [5.0, 100_000.0])
    func signatureAgeOutsideItsRangeIsRefused(age: Double) {
        #expect(throws: ConfigError.self) { try parse(["maxSignatureAge": age]) }
    }

    @Test func secretsAreRedactedInEveryOutput() throws {
        let config = try parse(keys([["id": "k1", "secret": secretA, "role": "manage"]]))
        let text = try config.jsonText(redacted: true)
        #expect(!text.contains(secretA))
        #expect(text.contains(#""id":"k1""#))
        #expect(text.contains(#""secret":"***""#))
        #expect(try config.jsonText(redacted: false).contains(secretA))
    }

    @Test func aRedactedSecretSentBackKeepsTheStoredOneByKeyID() throws {
        let stored = try parse(
            keys([["id": "k1", "secret": secretA, "role": "resolve"], ["id": "k2", "secret": secretB, "role": "manage"]]))
        // What an admin GET shows, with k1 rotated out and a new key k3 added.
        let sent = try parse(
            keys([["id": "k2", "secret": "***", "role": "manage"], ["id": "k3", "secret": "client-secret-cccc-0003", "role": "resolve"]]),
            allowingRedacted: true)
        let merged = try sent.keepingSecrets(of: stored)
        #expect(merged.clientKeys.map(\.id) == ["k2", "k3"])
        #expect(merged.clientKeys[0].secret == secretB)
        #expect(merged.clientKeys[1].secret == "client-secret-cccc-0003")
    }

    @Test func aRedactedSecretForAnUnknownKeyIsRefused() throws {
        let stored = try parse(keys([["id": "k1", "secret": secretA, "role": "resolve"]]))
        let sent = try parse(keys([["id": "k9", "secret": "***", "role": "resolve"]]), allowingRedacted: true)
        #expect(throws: ConfigError.self) { try sent.keepingSecrets(of: stored) }
        #expect(throws: ConfigError.self) { try sent.keepingSecrets(of: nil) }
    }

    @Test func theJSONTextReadsBackEqual() throws {
        let config = try parse([
            "clientKeys": [["id": "k1", "secret": secretA, "role": "resolve"]], "requireSignedRequests": true, "maxSignatureAge": 30,
        ])
        let object = try JSONSerialization.jsonObject(with: Data(try config.jsonText(redacted: false).utf8)) as! [String: Any]
        let read = try parse(object)
        #expect(read.clientKeys == config.clientKeys)
        #expect(read.requireSignedRequests && read.maxSignatureAge == 30)
    }

    @Test func rolesOrderResolveBelowManage() {
        #expect(ClientKey.Role.manage.allows(.resolve))
        #expect(ClientKey.Role.manage.allows(.manage))
        #expect(ClientKey.Role.resolve.allows(.resolve))
        #expect(!ClientKey.Role.resolve.allows(.manage))
    }
}
