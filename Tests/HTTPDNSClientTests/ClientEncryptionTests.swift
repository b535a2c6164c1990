import Foundation
import Testing

@testable import HTTPDNSClient

/// The client's encryption with a stub transport: the documented worked example, the key's
/// checks, and answers that must not be believed.
@Suite("HTTPDNSClient encryption")
struct ClientEncryptionTests {
    static let keyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    static let serviceA = URL(string: "http://127.0.0.1:9001")!
    static let serviceB = URL(string: "http://127.0.0.1:9002")!
    static let answerJSON = #"{"host":"a.example","ips":["192.0.2.1"],"ipsv6":[],"ttl":60}"#

    /// How a stub answers one encrypted request.
    enum Reply {
        case sealed
        /// Sealed, then one ciphertext bit flipped.
        case tampered
        /// Sealed for another request (another nonce): a replayed answer.
        case replayed
        case plain
    }

    /// A stub service answering `a.example` as `reply(port)` says, sealing with `keyHex` the
    /// way docs/encryption.md says (the nonce `N` is the first 16 characters of `enc`).
    private func transport(_ reply: @escaping @Sendable (Int?) -> Reply) -> StubTransport {
        StubTransport { url in
            let enc = try #require(url.argument("enc"))
            #expect(url.argument("host") == nil && url.argument("type") == nil)
            let nonce = reply(url.port) == .replayed ? "AAAAAAAAAAAAAAAA" : String(enc.prefix(16))
            guard reply(url.port) != .plain else { return StubTransport.json(Self.answerJSON) }
            var sealed = try EncryptionV1.seal(
                Array(Self.answerJSON.utf8), key: try HTTPDNSEncryptionKey(hex: Self.keyHex).bytes,
                associatedData: Array("httpdns-enc-v1 answer GET /v1/shop/resolve \(nonce)".utf8))
            if reply(url.port) == .tampered { sealed[14] ^= 0x01 }
            return HTTPDNSTransportResponse(status: 200, headers: ["content-type": "application/octet-stream"], body: Data(sealed))
        }
    }

    private func client(_ transport: StubTransport, system: StubSystemResolver) throws -> HTTPDNSClient {
        HTTPDNSClient(
            configuration: HTTPDNSClientConfiguration(
                services: [Self.serviceA, Self.serviceB], account: "shop", encryptionKey: try HTTPDNSEncryptionKey(hex: Self.keyHex),
                systemResolverFallback: true),
            transport: transport, clock: ManualHTTPDNSClock(), systemResolver: system)
    }

    @Test func theDocumentedWorkedExampleOpensWithTheClientsAssociatedData() throws {
        let key = try HTTPDNSEncryptionKey(hex: Self.keyHex).bytes
        let enc = "EBESExQVFhcYGRobFZHrYnS-TcTkEHB8YgkFNvkzIWM9ti7BgsSjPuspTgYqbEfOBkcCiC0Wfg"
        let base64 = enc.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let sealedQuery = try #require(Data(base64Encoded: base64 + String(repeating: "=", count: (4 - base64.count % 4) % 4)))
        let query = try EncryptionV1.open(
            Array(sealedQuery), key: key, associatedData: EncryptionV1.associatedData("query", "GET", "/v1/shop/resolve"))
        #expect(String(decoding: query, as: UTF8.self) == "host=www.example.com&type=A")
        #expect(EncryptionV1.base64url(Array(sealedQuery)) == enc)

        let answerHex =
            "202122232425262728292a2ba918ce1f1fec3834380b35b9ef7d8c98bd3980f9a9e30c834eda4e7b39f97c332e"
            + "acd43dbc0b05f426d35fb005253da192599ab8b806763ce2400b69209030ebe80aef64e4fe82ffe5359d53d77f"
            + "0357e5bb1177d88ef47daa6df808797dfdb467760274bb30ff9facbe9e61c29abe760d6aeaafcd4d9d193e1bb1"
            + "c0943c175bf0"
        let sealedAnswer = stride(from: 0, to: answerHex.count, by: 2).map { offset in
            UInt8(answerHex.dropFirst(offset).prefix(2), radix: 16)!
        }
        let answer = try EncryptionV1.open(
            sealedAnswer, key: key,
            associatedData: EncryptionV1.associatedData("answer", "GET", "/v1/shop/resolve", "EBESExQVFhcYGRob"))
        #expect(String(decoding: answer, as: UTF8.self).hasPrefix(#"{"host":"www.example.com","ips":["192.0.2.1"]"#))
    }

    @Test func aSealedAnswerForThisRequestIsOpened() async throws {
        let client = try client(transport { _ in .sealed }, system: StubSystemResolver([:]))
        let answer = try await client.resolve("a.example")
        #expect(answer.source == .service && answer.addresses == ["192.0.2.1"])
    }

    @Test(arguments: [Reply.tampered, .replayed, .plain])
    func anAnswerThatDoesNotVerifyIsRefusedFailedOverButNotGivenToTheSystemResolver(_ bad: Reply) async throws {
        let system = StubSystemResolver(["a.example": ["192.0.2.9"]])
        let everywhere = transport { _ in bad }
        await #expect {
            try await client(everywhere, system: system).resolve("a.example")
        } throws: { error in
            guard case .unverifiedReply(let failures) = error as? HTTPDNSClientError else { return false }
            return failures.count == 2 && failures[0].hasPrefix(Self.serviceA.absoluteString)
        }
        #expect(system.count == 0 && everywhere.urls.count == 2)

        let onlyA = transport { port in port == Self.serviceA.port ? bad : .sealed }
        let answer = try await client(onlyA, system: system).resolve("a.example")
        #expect(answer.source == .service && answer.addresses == ["192.0.2.1"])
        #expect(onlyA.urls.map(\.port) == [9001, 9002])
    }

    @Test func anErrorInClearIsTheServicesRefusal() async throws {
        let refusing = StubTransport { _ in
            StubTransport.json(#"{"error":{"code":"Unauthorized","message":"enc does not decrypt"}}"#, status: 401)
        }
        await #expect(throws: HTTPDNSClientError.refused(status: 401, code: "Unauthorized", message: "enc does not decrypt")) {
            try await client(refusing, system: StubSystemResolver([:])).resolve("a.example")
        }
    }

    @Test func aBadKeyIsAConfigurationErrorAndAKeyIsNeverPrinted() throws {
        for bad in ["", String(Self.keyHex.dropLast()), Self.keyHex + "00", String(Self.keyHex.dropLast()) + "g"] {
            #expect {
                _ = try HTTPDNSEncryptionKey(hex: bad)
            } throws: { error in
                guard case .invalidConfiguration(let reason) = error as? HTTPDNSClientError else { return false }
                return bad.isEmpty || !reason.contains(bad.prefix(8))
            }
        }
        #expect(throws: HTTPDNSClientError.self) { try HTTPDNSEncryptionKey(bytes: [UInt8](repeating: 1, count: 16)) }
        let key = try HTTPDNSEncryptionKey(hex: Self.keyHex.uppercased() + "\n")
        #expect(key.bytes == Array(0..<32))
        let configuration = HTTPDNSClientConfiguration(services: [Self.serviceA], encryptionKey: key)
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in ["\(key)", String(reflecting: key), "\(configuration)", String(reflecting: configuration), dumped] {
            #expect(!text.contains("0001020304") && !text.contains("[0, 1, 2"), "\(text)")
        }
    }
}
