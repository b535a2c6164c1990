import COpenSSL

/// An HMAC-SHA256 key set up once and used for any number of messages, from any thread: the
/// SHA-256 states after the key's inner and outer blocks are computed when it is made, and each
/// message starts from copies of them on the caller's stack (no allocation, no lock, no context
/// made per message). The client signature check keeps one per secret: OpenSSL 3's one-shot
/// `HMAC` (`Digest.hmacSHA256`) fetches the MAC and the digest by name and hashes the key blocks
/// again on every call, and `EVP_MAC_CTX_dup` of a prepared context allocates three digest
/// contexts per message.
public final class HMACSHA256Key: @unchecked Sendable {
    /// The prepared states, written by `init` only (so read by any thread without a lock);
    /// cleansed when the key goes.
    private let prepared: UnsafeMutablePointer<chttpdns_hmac_sha256_key>

    /// The MAC's size in bytes.
    public static let size = 32

    public init(_ key: [UInt8]) throws(CryptoError) {
        let states = UnsafeMutablePointer<chttpdns_hmac_sha256_key>.allocate(capacity: 1)
        let ok = key.withUnsafeBytes { chttpdns_hmac_sha256_prepare(states, $0.baseAddress, $0.count) }
        do {
            try CryptoError.check(ok == 1, "HMAC-SHA256 key")
        } catch {
            Self.release(states)
            throw error
        }
        prepared = states
    }

    deinit { Self.release(prepared) }

    private static func release(_ states: UnsafeMutablePointer<chttpdns_hmac_sha256_key>) {
        OPENSSL_cleanse(states, MemoryLayout<chttpdns_hmac_sha256_key>.size)
        states.deallocate()
    }

    /// HMAC-SHA256 of `message` (32 bytes).
    public func authenticationCode(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        var ok: Int32 = 0
        let output = [UInt8](unsafeUninitializedCapacity: Self.size) { buffer, count in
            ok = message.withUnsafeBytes { chttpdns_hmac_sha256_prepared(prepared, $0.baseAddress, $0.count, buffer.baseAddress) }
            count = ok == 1 ? Self.size : 0
        }
        try CryptoError.check(ok == 1, "HMAC-SHA256")
        return output
    }

    /// HMAC-SHA256 of `message` written to `output`, which must hold `size` bytes: for a caller
    /// that keeps the MAC on its stack.
    public func authenticationCode(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        precondition(output.count >= Self.size, "an HMAC-SHA256 output buffer holds 32 bytes")
        let ok = chttpdns_hmac_sha256_prepared(
            prepared, message.baseAddress, message.count, output.baseAddress!.assumingMemoryBound(to: UInt8.self))
        try CryptoError.check(ok == 1, "HMAC-SHA256")
    }
}
