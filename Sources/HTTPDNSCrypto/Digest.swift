import COpenSSL

/// Digests and MACs through OpenSSL libcrypto (`SHA256`, `MD5`, `HMAC`), for request signatures:
/// the ones httpdnsd makes towards its upstreams and the ones it checks on client requests.
public enum Digest {
    /// SHA-256 of `bytes` (32 bytes).
    public static func sha256(_ bytes: some Collection<UInt8>) throws(CryptoError) -> [UInt8] {
        try digest(0, bytes, "SHA-256")
    }

    /// MD5 of `bytes` (16 bytes), for the EMAS HTTPDNS signature, which is defined with it.
    public static func md5(_ bytes: some Collection<UInt8>) throws(CryptoError) -> [UInt8] {
        try digest(1, bytes, "MD5")
    }

    /// HMAC-SHA256 of `message` under `key` (32 bytes).
    public static func hmacSHA256(key: some Collection<UInt8>, _ message: some Collection<UInt8>) throws(CryptoError) -> [UInt8] {
        try hmacSHA256(key: Array(key), Array(message))
    }

    /// The same for arrays: what the client-signature check calls on every signed request (the
    /// generic form, called across modules, is not specialised and copies both).
    public static func hmacSHA256(key: [UInt8], _ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard key.count <= Int(Int32.max) else { throw CryptoError("HMAC-SHA256", reason: "key longer than 2 GiB") }
        var size: UInt32 = 0
        let output = [UInt8](unsafeUninitializedCapacity: Int(EVP_MAX_MD_SIZE)) { buffer, count in
            size = key.withUnsafeBytes { keyBytes in
                message.withUnsafeBufferPointer { data in
                    chttpdns_hmac_sha256(keyBytes.baseAddress, Int32(keyBytes.count), data.baseAddress, data.count, buffer.baseAddress)
                }
            }
            count = min(Int(size), Int(EVP_MAX_MD_SIZE))
        }
        try CryptoError.check(size == 32, "HMAC-SHA256")
        return output
    }

    /// Lower-case hex SHA-256 of the UTF-8 bytes of `text`.
    public static func sha256Hex(_ text: String) throws(CryptoError) -> String {
        hex(try sha256(Array(text.utf8)))
    }

    /// Lower-case hex MD5 of the UTF-8 bytes of `text`.
    public static func md5Hex(_ text: String) throws(CryptoError) -> String {
        hex(try md5(Array(text.utf8)))
    }

    /// Lower-case hex of `bytes`.
    public static func hex(_ bytes: some Collection<UInt8>) -> String {
        hex(Array(bytes))
    }

    /// The same for an array, written in one pass into the string's own storage.
    public static func hex(_ bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            bytes.withUnsafeBytes { writeHex($0, to: text.baseAddress!) }
            return bytes.count * 2
        }
    }

    /// Writes the lower-case hex of `bytes` (two digits each) at `output`, which has room for them.
    public static func writeHex(_ bytes: UnsafeRawBufferPointer, to output: UnsafeMutablePointer<UInt8>) {
        for (index, byte) in bytes.enumerated() {
            output[2 * index] = hexDigit(byte >> 4)
            output[2 * index + 1] = hexDigit(byte & 0x0F)
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// Whether `lhs` and `rhs` hold the same bytes, in time that depends on their lengths only
    /// (`CRYPTO_memcmp`): for comparing a received MAC or token with the expected one.
    public static func constantTimeEquals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        constantTimeEquals(Array(lhs), Array(rhs))
    }

    /// The same for arrays (no copies).
    public static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in constantTimeEquals(left, right) } }
    }

    /// The same for bytes in memory.
    public static func constantTimeEquals(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard !lhs.isEmpty else { return true }
        return CRYPTO_memcmp(lhs.baseAddress, rhs.baseAddress, lhs.count) == 0
    }

    private static func digest(_ type: Int32, _ bytes: some Collection<UInt8>, _ name: String) throws(CryptoError) -> [UInt8] {
        let bytes = Array(bytes)
        var size: UInt32 = 0
        let output = [UInt8](unsafeUninitializedCapacity: Int(EVP_MAX_MD_SIZE)) { buffer, count in
            size = bytes.withUnsafeBytes { chttpdns_digest(type, $0.baseAddress, $0.count, buffer.baseAddress) }
            count = Int(size)
        }
        try CryptoError.check(size > 0, name)
        return output
    }
}
