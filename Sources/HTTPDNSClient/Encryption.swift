import Foundation

#if canImport(CryptoKit)
    import CryptoKit
#else
    import HTTPDNSCrypto
#endif

/// The account's AES-256 key (`aesSecretKey`, docs/encryption.md): with it, every request of
/// the client is encrypted and every answer must be. Never printed: `description` and the
/// mirror hide it, and no error message quotes it.
public struct HTTPDNSEncryptionKey: Sendable, CustomStringConvertible, CustomReflectable {
    /// The 32 bytes of the key.
    let bytes: [UInt8]

    /// The key as operators have it in the account's `aesSecretKey`: 64 hex digits (either
    /// case; whitespace around them, such as a file's final newline, is ignored).
    public init(hex: String) throws(HTTPDNSClientError) {
        let digits = Array(hex.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        guard digits.count == 64 else {
            throw .invalidConfiguration(
                "the encryption key must be the account's aesSecretKey, 64 hex digits (32 bytes); it has \(digits.count) characters")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = Self.hexValue(digits[index]), let low = Self.hexValue(digits[index + 1]) else {
                throw .invalidConfiguration("the encryption key must be 64 hex digits (0-9, a-f); it has another character")
            }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }

    /// The key as 32 raw bytes.
    public init(bytes: [UInt8]) throws(HTTPDNSClientError) {
        guard bytes.count == 32 else {
            throw .invalidConfiguration("the encryption key must be 32 bytes (AES-256); it has \(bytes.count)")
        }
        self.bytes = bytes
    }

    public var description: String { "HTTPDNSEncryptionKey(***)" }

    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// One encrypted request (docs/encryption.md): its query string sealed as `enc`, and what it
/// takes to open the answer, which is bound to this request's method, path and nonce.
struct SealedRequest {
    /// The value of the `enc` argument: base64url of `nonce || ciphertext || tag`.
    let enc: String
    /// base64url of the nonce of `enc`, the `{N}` of the answer's associated data.
    let nonce: String
    private let key: HTTPDNSEncryptionKey
    private let method: String
    private let path: String

    /// Seals `query` (what would follow `?` in a plain request) for `method` and `path` (the
    /// request path as the service sees it, without the query string).
    init(query: String, key: HTTPDNSEncryptionKey, method: String, path: String) throws(HTTPDNSClientError) {
        let sealed: [UInt8]
        do {
            sealed = try EncryptionV1.seal(
                Array(query.utf8), key: key.bytes, associatedData: EncryptionV1.associatedData("query", method, path))
        } catch {
            throw .invalidConfiguration("encrypting the request: \(error)")
        }
        enc = EncryptionV1.base64url(sealed)
        nonce = EncryptionV1.base64url(Array(sealed.prefix(EncryptionV1.nonceCount)))
        self.key = key
        self.method = method
        self.path = path
    }

    /// `response` with its body opened. A sealed body (`application/octet-stream`) must open
    /// under the key for this request; a body in clear is accepted only for an error status,
    /// which is how the service answers a request it could not open (a refused signature, a
    /// key it does not have): a 2xx in clear did not come from the service that opened it.
    func open(_ response: HTTPDNSTransportResponse) throws(HTTPDNSClientError) -> HTTPDNSTransportResponse {
        let type = response.headers["content-type"]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
        guard type?.lowercased() == "application/octet-stream" else {
            guard (200...299).contains(response.status) else { return response }
            throw .unverifiedReply(failures: ["HTTP \(response.status) in clear to an encrypted request"])
        }
        var opened = response
        do {
            let data = EncryptionV1.associatedData("answer", method, path, nonce)
            opened.body = Data(try EncryptionV1.open(Array(response.body), key: key.bytes, associatedData: data))
        } catch {
            throw .unverifiedReply(failures: [
                "HTTP \(response.status): the answer does not decrypt: changed on the way, or not sealed for this request"
            ])
        }
        return opened
    }
}

/// AES-256-GCM as docs/encryption.md uses it: `nonce (12) || ciphertext || tag (16)`, a random
/// nonce a message, associated data binding each part to its request. On Apple platforms from
/// CryptoKit, elsewhere from libcrypto through HTTPDNSCrypto's `AESGCM`.
enum EncryptionV1 {
    static let nonceCount = 12

    /// `httpdns-enc-v1 {part} {METHOD} {path}[ {N}]`, ASCII.
    static func associatedData(_ part: String, _ method: String, _ path: String, _ nonce: String? = nil) -> [UInt8] {
        Array(("httpdns-enc-v1 \(part) \(method) \(path)" + (nonce.map { " \($0)" } ?? "")).utf8)
    }

    #if canImport(CryptoKit)
        static func seal(_ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
            let box = try AES.GCM.seal(plaintext, using: SymmetricKey(data: key), authenticating: associatedData)
            guard let combined = box.combined else { throw HTTPDNSClientError.invalidConfiguration("AES-GCM nonce size") }
            return Array(combined)
        }

        static func open(_ sealed: [UInt8], key: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
            Array(try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: SymmetricKey(data: key), authenticating: associatedData))
        }

        static func base64url(_ bytes: [UInt8]) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    #else
        static func seal(_ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
            try AESGCM.seal(plaintext, key: key, associatedData: associatedData)
        }

        static func open(_ sealed: [UInt8], key: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
            try AESGCM.open(sealed, key: key, associatedData: associatedData)
        }

        static func base64url(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }
    #endif
}
