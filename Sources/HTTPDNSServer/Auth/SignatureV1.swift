import HTTPDNSCore
import HTTPDNSCrypto

/// Client request signatures, scheme v1 (docs/security.md has the specification and a worked
/// example): `sign = hex(HMAC-SHA256(secret, canonical string))`, where the canonical string is
/// these six lines joined by `\n` (no newline at the end):
///
///     HTTPDNS-HMAC-SHA256
///     METHOD
///     /percent-encoded/path
///     name=value&name=value      (sorted by encoded name; without kid, t and sign)
///     t                          (the expiry, Unix seconds, as sent)
///     hex(SHA-256(body))
///
/// Names, values and the path are taken percent-decoded (as the service reads them) and encoded
/// again one way: RFC 3986 unreserved bytes (`A-Z a-z 0-9 - . _ ~`) as they are, every other
/// byte of their UTF-8 as `%XX` with upper-case hex; the path keeps its `/` too.
public enum SignatureV1 {
    /// The scheme's name: first line of the canonical string and `Authorization` scheme.
    public static let scheme = "HTTPDNS-HMAC-SHA256"
    /// The query arguments that carry a signature (never part of the canonical string).
    public static let argumentNames: Set<String> = ["kid", "t", "sign"]

    /// The signature material of a request, as sent.
    public struct Credentials: Sendable, Equatable {
        public var keyID: String
        /// The expiry, Unix seconds, as the decimal text sent (signed as is).
        public var expiry: String
        /// Lower-case hex, 64 characters.
        public var signature: String

        /// `expiry` as a number, read as its decimal digits (`presented` checked that it is
        /// at most 12 of them: exact as a `Double`), without the general number parser.
        public var expirySeconds: Double {
            var text = expiry
            return text.withUTF8 { digits in
                var seconds: Int64 = 0
                for digit in digits { seconds = seconds &* 10 &+ Int64(digit &- UInt8(ascii: "0")) }
                return Double(seconds)
            }
        }

        public init(keyID: String, expiry: String, signature: String) {
            self.keyID = keyID
            self.expiry = expiry
            self.signature = signature
        }
    }

    /// What a request says about its signature.
    public enum Presented: Sendable, Equatable {
        /// Nothing: no `kid`/`t`/`sign` argument and no `HTTPDNS-HMAC-SHA256` authorization.
        case none
        case credentials(Credentials)
        /// Something, but not a usable signature; the text says what is wrong.
        case malformed(String)
    }

    /// Reads the signature from the query arguments or the `Authorization` header (not both).
    /// An `Authorization` header of another scheme (e.g. `Bearer`) is not a signature.
    public static func presented(in request: HTTPRequest) -> Presented {
        // The three arguments in one pass over the query, as `String`s only when present.
        var kid: String?, t: String?, sign: String?
        request.query.forEachPair { name, value in
            guard isSignatureArgument(name) else { return }
            let text = String(decoding: value, as: UTF8.self)
            switch name.count {
            case 1: t = text
            case 3: kid = text
            default: sign = text
            }
        }
        let inQuery = kid != nil || t != nil || sign != nil
        var header: String?
        if let authorization = request.authorization {
            let prefix = scheme + " "
            if authorization.utf8.count > prefix.utf8.count, authorization.prefix(prefix.count).lowercased() == prefix.lowercased() {
                header = String(authorization.dropFirst(prefix.count))
            } else if authorization.lowercased() == scheme.lowercased() {
                header = ""
            }
        }
        if inQuery && header != nil { return .malformed("a signature in both the query and the Authorization header") }
        let credentials: (String?, String?, String?)
        if let header {
            var fields: [String: String] = [:]
            for part in header.split(separator: ",") {
                let trimmed = part.trimmingSpaces
                guard let equals = trimmed.firstIndex(of: "=") else {
                    return .malformed("Authorization field '\(trimmed.prefix(16))' is not name=value")
                }
                let name = String(trimmed[..<equals]).lowercased()
                guard ["kid", "t", "sign"].contains(name) else { return .malformed("unknown Authorization field '\(name.prefix(16))'") }
                guard fields[name] == nil else { return .malformed("Authorization field '\(name)' given twice") }
                fields[name] = String(trimmed[trimmed.index(after: equals)...])
            }
            credentials = (fields["kid"], fields["t"], fields["sign"])
        } else if inQuery {
            credentials = (kid, t, sign)
        } else {
            return .none
        }
        guard let keyID = credentials.0, !keyID.isEmpty else { return .malformed("the key id (kid) is missing") }
        guard let expiry = credentials.1, !expiry.isEmpty else { return .malformed("the expiry (t) is missing") }
        guard let signature = credentials.2, !signature.isEmpty else { return .malformed("the signature (sign) is missing") }
        guard expiry.utf8.count <= 12, expiry.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return .malformed("the expiry (t) must be Unix seconds, digits only")
        }
        var signatureText = signature
        guard signatureText.withUTF8({ $0.count == 64 && $0.allSatisfy(isLowerHex) }) else {
            return .malformed("the signature (sign) must be 64 lower-case hex digits")
        }
        if request.query.hasRepeatedNames { return .malformed("a query argument is given more than once") }
        return .credentials(Credentials(keyID: keyID, expiry: expiry, signature: signature))
    }

    /// The canonical string of a request (the signature arguments left out) for expiry `expiry`.
    public static func canonicalString(
        method: String, path: String, arguments: [(name: String, value: String)], expiry: String, body: [UInt8]
    ) throws(CryptoError) -> String {
        String(decoding: try canonicalBytes(method: method, path: path, arguments: arguments, expiry: expiry, body: body), as: UTF8.self)
    }

    /// The canonical string's bytes (`withCanonicalBytes`).
    static func canonicalBytes(
        method: String, path: String, arguments: [(name: String, value: String)], expiry: String, body: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        try withCanonicalBytes(method: method, path: path, arguments: ArgumentBytes(arguments), expiry: expiry, body: body) { Array($0) }
    }

    /// `hex(SHA-256(""))`, the last line for every request without a body (every GET): a
    /// constant, since a digest through OpenSSL 3's EVP costs as much as a tenth of a cache hit.
    /// `SignatureV1Tests` checks it against `Digest.sha256`.
    static let emptyBodyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The canonical string of `request`.
    public static func canonicalString(of request: HTTPRequest, expiry: String) throws(CryptoError) -> String {
        try canonicalString(method: request.method, path: request.path, arguments: request.query.pairs, expiry: expiry, body: request.body)
    }

    /// `hex(HMAC-SHA256(secret, canonical))`.
    public static func signature(secret: String, canonical: String) throws(CryptoError) -> String {
        Digest.hex(try Digest.hmacSHA256(key: Array(secret.utf8), Array(canonical.utf8)))
    }

    /// Whether `credentials` sign `request` under `key` (the secret's prepared HMAC key): the MAC
    /// of its canonical string, written as hex on the stack, compared in constant time with the
    /// signature sent (64 lower-case hex digits, which `presented` checked). Nothing is
    /// allocated for a request without a body.
    static func verify(_ request: HTTPRequest, _ credentials: Credentials, key: HMACSHA256Key) throws(CryptoError) -> Bool {
        var sent = credentials.signature
        return try withCanonicalBytes(
            method: request.method, path: request.path, arguments: ArgumentBytes(request.query), expiry: credentials.expiry,
            body: request.body
        ) { canonical throws(CryptoError) in
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 3 * HMACSHA256Key.size) { buffer throws(CryptoError) in
                let mac = UnsafeMutableRawBufferPointer(start: buffer.baseAddress, count: HMACSHA256Key.size)
                try key.authenticationCode(canonical, into: mac)
                let expected = buffer.baseAddress! + HMACSHA256Key.size
                Digest.writeHex(UnsafeRawBufferPointer(mac), to: expected)
                let expectedHex = UnsafeRawBufferPointer(start: expected, count: 2 * HMACSHA256Key.size)
                return sent.withUTF8 { Digest.constantTimeEquals(expectedHex, UnsafeRawBufferPointer($0)) }
            }
        }
    }

    /// `text` as the canonical string writes it (`PercentEncoding`: unreserved bytes as they are,
    /// every other as `%XX` upper-case; `/` kept when asked).
    public static func percentEncoded(_ text: String, keepingSlash: Bool = false) -> String {
        PercentEncoding.encode(text, keepingSlash: keepingSlash)
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
