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

        /// `expiry` as a number (`BorrowedCredentials.expirySeconds`).
        public var expirySeconds: Double {
            var text = expiry
            return text.withUTF8 { BorrowedCredentials.seconds(UnsafeRawBufferPointer($0)) }
        }

        public init(keyID: String, expiry: String, signature: String) {
            self.keyID = keyID
            self.expiry = expiry
            self.signature = signature
        }
    }

    /// The signature material of a request as the bytes of its `SignedParts` (valid as long as
    /// they are): what the check reads, without a `String` of any of it.
    struct BorrowedCredentials {
        var keyID: UnsafeRawBufferPointer
        /// The expiry, Unix seconds, as the decimal digits sent.
        var expiry: UnsafeRawBufferPointer
        /// Lower-case hex, 64 digits.
        var signature: UnsafeRawBufferPointer

        /// `expiry` as a number, read as its decimal digits (`presented` checked that it is at
        /// most 12 of them: exact as a `Double`), without the general number parser.
        var expirySeconds: Double { Self.seconds(expiry) }

        static func seconds(_ digits: UnsafeRawBufferPointer) -> Double {
            var seconds: Int64 = 0
            for digit in digits { seconds = seconds &* 10 &+ Int64(digit &- UInt8(ascii: "0")) }
            return Double(seconds)
        }

        /// The same as text.
        var credentials: Credentials {
            Credentials(
                keyID: String(decoding: keyID, as: UTF8.self), expiry: String(decoding: expiry, as: UTF8.self),
                signature: String(decoding: signature, as: UTF8.self))
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

    /// `Presented`, its credentials borrowed from the request's `SignedParts`.
    enum BorrowedPresented {
        case none
        case credentials(BorrowedCredentials)
        case malformed(String)
    }

    /// Reads the signature from the query arguments or the `Authorization` header (not both).
    /// An `Authorization` header of another scheme (e.g. `Bearer`) is not a signature.
    public static func presented(in request: some SignedRequest) -> Presented {
        request.withSignedParts { parts in
            switch presented(inParts: parts) {
            case .none: .none
            case .credentials(let credentials): .credentials(credentials.credentials)
            case .malformed(let reason): .malformed(reason)
            }
        }
    }

    /// `presented(in:)` on the bytes of `parts`: the one reading of a signature, for the general
    /// path's requests and the fast path's borrowed ones alike.
    static func presented(inParts parts: SignedParts) -> BorrowedPresented {
        // The three arguments in one pass over the query.
        var kid: UnsafeRawBufferPointer?, t: UnsafeRawBufferPointer?, sign: UnsafeRawBufferPointer?
        for pair in parts.arguments where isSignatureArgument(pair.name) {
            switch pair.name.count {
            case 1: t = pair.value
            case 3: kid = pair.value
            default: sign = pair.value
            }
        }
        let inQuery = kid != nil || t != nil || sign != nil
        let header = parts.authorization.flatMap(authorizationParameters)
        if inQuery && header != nil { return .malformed("a signature in both the query and the Authorization header") }
        if let header {
            if let problem = readAuthorizationFields(header, kid: &kid, t: &t, sign: &sign) { return .malformed(problem) }
        } else if !inQuery {
            return .none
        }
        guard let keyID = kid, !keyID.isEmpty else { return .malformed("the key id (kid) is missing") }
        guard let expiry = t, !expiry.isEmpty else { return .malformed("the expiry (t) is missing") }
        guard let signature = sign, !signature.isEmpty else { return .malformed("the signature (sign) is missing") }
        guard expiry.count <= 12, allBytes(of: expiry, lowerHex: false) else {
            return .malformed("the expiry (t) must be Unix seconds, digits only")
        }
        guard signature.count == 64, allBytes(of: signature, lowerHex: true) else {
            return .malformed("the signature (sign) must be 64 lower-case hex digits")
        }
        if parts.hasRepeatedNames { return .malformed("a query argument is given more than once") }
        return .credentials(BorrowedCredentials(keyID: keyID, expiry: expiry, signature: signature))
    }

    /// The canonical string of a request (the signature arguments left out) for expiry `expiry`.
    public static func canonicalString(
        method: String, path: String, arguments: [(name: String, value: String)], expiry: String, body: [UInt8]
    ) throws(CryptoError) -> String {
        String(decoding: try canonicalBytes(method: method, path: path, arguments: arguments, expiry: expiry, body: body), as: UTF8.self)
    }

    /// `hex(SHA-256(""))`, the last line for every request without a body (every GET): a
    /// constant, since a digest through OpenSSL 3's EVP costs as much as a tenth of a cache hit.
    /// `SignatureV1Tests` checks it against `Digest.sha256`.
    static let emptyBodyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The canonical string of `request`.
    public static func canonicalString(of request: HTTPRequest, expiry: String) throws(CryptoError) -> String {
        var expiry = expiry
        return try expiry.withUTF8 { expiry in
            request.withSignedParts { parts in
                Swift.Result { () throws(CryptoError) in
                    try withCanonicalBytes(parts, expiry: UnsafeRawBufferPointer(expiry)) { String(decoding: $0, as: UTF8.self) }
                }
            }
        }.get()
    }

    /// `hex(HMAC-SHA256(secret, canonical))`.
    public static func signature(secret: String, canonical: String) throws(CryptoError) -> String {
        Digest.hex(try Digest.hmacSHA256(key: Array(secret.utf8), Array(canonical.utf8)))
    }

    /// Whether `credentials` sign the request of `parts` under `key` (the secret's prepared HMAC
    /// key): the MAC of its canonical string, written as hex on the stack, compared in constant
    /// time with the signature sent (64 lower-case hex digits, which `presented` checked).
    /// Nothing is allocated for a request without a body.
    static func verify(_ parts: SignedParts, _ credentials: BorrowedCredentials, key: HMACSHA256Key) throws(CryptoError) -> Bool {
        try withCanonicalBytes(parts, expiry: credentials.expiry) { canonical throws(CryptoError) in
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 3 * HMACSHA256Key.size) { buffer throws(CryptoError) in
                let mac = UnsafeMutableRawBufferPointer(start: buffer.baseAddress, count: HMACSHA256Key.size)
                try key.authenticationCode(canonical, into: mac)
                let expected = buffer.baseAddress! + HMACSHA256Key.size
                Digest.writeHex(UnsafeRawBufferPointer(mac), to: expected)
                let expectedHex = UnsafeRawBufferPointer(start: expected, count: 2 * HMACSHA256Key.size)
                return Digest.constantTimeEquals(expectedHex, credentials.signature)
            }
        }
    }

    /// `verify` of a whole request and credentials as text.
    static func verify(_ request: some SignedRequest, _ credentials: Credentials, key: HMACSHA256Key) throws(CryptoError) -> Bool {
        var keyID = credentials.keyID, expiry = credentials.expiry, signature = credentials.signature
        return try request.withSignedParts { parts in
            keyID.withUTF8 { keyID in
                expiry.withUTF8 { expiry in
                    signature.withUTF8 { signature in
                        Swift.Result { () throws(CryptoError) in
                            let borrowed = BorrowedCredentials(
                                keyID: UnsafeRawBufferPointer(keyID), expiry: UnsafeRawBufferPointer(expiry),
                                signature: UnsafeRawBufferPointer(signature))
                            return try verify(parts, borrowed, key: key)
                        }
                    }
                }
            }
        }.get()
    }

    /// `text` as the canonical string writes it (`PercentEncoding`: unreserved bytes as they are,
    /// every other as `%XX` upper-case; `/` kept when asked).
    public static func percentEncoded(_ text: String, keepingSlash: Bool = false) -> String {
        PercentEncoding.encode(text, keepingSlash: keepingSlash)
    }

    /// Whether every byte is a decimal digit or, with `lowerHex`, a lower-case hex digit. The
    /// loop has no early exit, so the compiler vectorises it (every signed request checks 64).
    private static func allBytes(of bytes: UnsafeRawBufferPointer, lowerHex: Bool) -> Bool {
        let letters: UInt8 = lowerHex ? 6 : 0
        var refused: UInt8 = 0
        for byte in bytes {
            let digit: UInt8 = byte &- UInt8(ascii: "0") < 10 ? 1 : 0
            let letter: UInt8 = byte &- UInt8(ascii: "a") < letters ? 1 : 0
            refused |= (digit | letter) ^ 1
        }
        return refused == 0
    }
}
