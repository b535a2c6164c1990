import COpenSSL

/// An HMAC-SHA256 key set up once and used for any number of messages, from any thread: the
/// key's inner and outer blocks are hashed when it is made (`EVP_MAC_init`), and each message
/// works on a copy of that context (`EVP_MAC_CTX_dup`, which only reads it). The client
/// signature check keeps one per secret: OpenSSL 3's one-shot `HMAC` (`Digest.hmacSHA256`)
/// fetches the MAC and the digest by name, takes their locks and hashes the key blocks again on
/// every call.
public final class HMACSHA256Key: @unchecked Sendable {
    /// The prepared `EVP_MAC_CTX`, never changed after `init` (so shared without a lock).
    private let prepared: OpaquePointer

    public init(_ key: [UInt8]) throws(CryptoError) {
        let context = key.withUnsafeBytes { chttpdns_hmac_sha256_prepare($0.baseAddress, $0.count) }
        try CryptoError.check(context != nil, "HMAC-SHA256 key")
        prepared = context!
    }

    deinit { EVP_MAC_CTX_free(prepared) }

    /// HMAC-SHA256 of `message` (32 bytes).
    public func authenticationCode(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        var ok: Int32 = 0
        let output = [UInt8](unsafeUninitializedCapacity: 32) { buffer, count in
            ok = message.withUnsafeBytes { chttpdns_hmac_sha256_prepared(prepared, $0.baseAddress, $0.count, buffer.baseAddress) }
            count = ok == 1 ? 32 : 0
        }
        try CryptoError.check(ok == 1, "HMAC-SHA256")
        return output
    }
}
