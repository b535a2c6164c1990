import Foundation

#if canImport(CryptoKit)
    import CryptoKit
#else
    import HTTPDNSCrypto
#endif

/// Signature v1 (docs/security.md): `hex(HMAC-SHA256(secret, canonical string))` over the
/// method, path, sorted arguments, expiry and body hash.
enum SignatureV1 {
    /// The hash of an empty body, line 6 of every GET's canonical string.
    static let emptyBodyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// Percent-encodes every byte except RFC 3986's unreserved characters (and `/` when
    /// `keepingSlash`), upper-case hex: the encoding of the canonical string and of the URLs sent.
    static func encode(_ text: String, keepingSlash: Bool = false) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlash:
                out.append("/")
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// The query `name=value&...` of `arguments`, encoded and sorted by encoded name (byte order).
    static func canonicalQuery(_ arguments: [(String, String)]) -> String {
        arguments.map { (encode($0.0), encode($0.1)) }
            .sorted { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// The six-line canonical string of a request without a body.
    static func canonicalString(method: String, path: String, query: String, expiry: Int) -> String {
        ["HTTPDNS-HMAC-SHA256", method, encode(path, keepingSlash: true), query, String(expiry), emptyBodyHash]
            .joined(separator: "\n")
    }

    /// The lower-case hex signature of `canonical` with `secret`.
    static func sign(_ canonical: String, secret: String) throws -> String {
        let mac = try hmacSHA256(key: Array(secret.utf8), message: Array(canonical.utf8))
        return mac.map { String(format: "%02x", $0) }.joined()
    }

    #if canImport(CryptoKit)
        private static func hmacSHA256(key: [UInt8], message: [UInt8]) throws -> [UInt8] {
            Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
        }
    #else
        private static func hmacSHA256(key: [UInt8], message: [UInt8]) throws -> [UInt8] {
            try Digest.hmacSHA256(key: key, message)
        }
    #endif
}
