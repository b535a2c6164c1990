import COpenSSL

/// Hex digests through OpenSSL libcrypto (`EVP_Digest`), for request signatures.
enum Digest {
    /// Lower-case hex SHA-256 of the UTF-8 bytes of `text`.
    static func sha256Hex(_ text: String) -> String {
        hex(Array(text.utf8), chttpdns_sha256)
    }

    /// Lower-case hex MD5 of the UTF-8 bytes of `text`.
    static func md5Hex(_ text: String) -> String {
        hex(Array(text.utf8), chttpdns_md5)
    }

    private static func hex(
        _ bytes: [UInt8],
        _ function: (UnsafeRawPointer?, Int, UnsafeMutablePointer<UInt8>?) -> UInt32
    ) -> String {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        let size = bytes.withUnsafeBytes { raw in
            output.withUnsafeMutableBufferPointer { function(raw.baseAddress, raw.count, $0.baseAddress) }
        }
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(Int(size) * 2)
        for byte in output.prefix(Int(size)) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
