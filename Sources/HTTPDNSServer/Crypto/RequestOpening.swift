import HTTPDNSCore
import HTTPDNSCrypto

/// Opens encrypted tenant requests (docs/encryption.md): `enc=BASE64URL(nonce || ciphertext ||
/// tag)`, the AES-256-GCM encryption of the query string under the account's `aesSecretKey`,
/// and for a request with a body, the body sealed the same way. Runs after authentication (the
/// signature covers `enc` and the sealed body as sent) and before the handler, which sees the
/// decrypted arguments and body as if they had been sent in clear.
enum RequestOpening {
    /// The query argument that carries an encrypted query string.
    static let argument = argumentName.description
    /// The same name as the resolve fast path compares it (`RequestHead.arguments`).
    static let argumentName: StaticString = "enc"
    /// The signature's query arguments (signature v1), the only ones allowed beside `enc`.
    static var signatureArguments: Set<String> { SignatureV1.argumentNames }

    enum Outcome {
        /// No `enc`, and the account does not require encryption: the request goes on as it is.
        case plain
        /// The request with its decrypted arguments and body; its answer is sealed by `exchange`.
        case opened(HTTPRequest, EncryptedExchange)
        /// The request opened, but what it holds is refused: the error is answered sealed.
        case refusedSealed(APIError, EncryptedExchange)
        /// Refused before anything could be opened (answered in clear): the client cannot read
        /// a sealed answer to a message that does not open, and a 401 must be told from one.
        case refused(APIError)
    }

    /// Opens `request` for `account` (its id, for messages), whose `aesSecretKey` is `key`.
    static func open(_ request: HTTPRequest, account: String, key: [UInt8]?, requireEncryption: Bool) -> Outcome {
        guard let text = request.query[argument] else {
            return plainRefusal(account: account, requireEncryption: requireEncryption).map(Outcome.refused) ?? .plain
        }
        guard let key else {
            return .refused(APIError(.invalidParameter, "account '\(account)' has no aesSecretKey: enc cannot be used"))
        }
        guard !request.query.hasRepeatedNames,
            request.query.pairs.allSatisfy({ $0.name == argument || signatureArguments.contains($0.name) })
        else {
            return .refused(
                APIError(.invalidParameter, "enc must be the only argument besides the signature's (kid, t, sign), each given once"))
        }
        guard let sealed = Base64URL.decode(text), sealed.count >= AESGCM.nonceCount + AESGCM.tagCount else {
            return .refused(
                APIError(.invalidParameter, "enc must be unpadded base64url of nonce (12 bytes) || ciphertext || tag (16 bytes)"))
        }
        let nonce = Array(sealed.prefix(AESGCM.nonceCount))
        let queryData = EncryptedExchange.associatedData(.query, method: request.method, path: request.path, requestNonce: nil)
        guard let plaintext = try? AESGCM.open(sealed, key: key, associatedData: queryData) else {
            return .refused(notOpened("enc"))
        }
        var opened = request
        opened.body = []
        // Its arguments are new: no reader has seen them.
        opened.fastPathDeclined = false
        if !request.body.isEmpty {
            let bodyData = EncryptedExchange.associatedData(.body, method: request.method, path: request.path, requestNonce: nonce)
            guard let body = try? AESGCM.open(request.body, key: key, associatedData: bodyData) else {
                return .refused(notOpened("the body"))
            }
            opened.body = body
        }
        let exchange = EncryptedExchange(key: key, method: request.method, path: request.path, requestNonce: nonce)
        switch parseQuery(plaintext) {
        case .success(let query):
            opened.query = query
            return .opened(opened, exchange)
        case .failure(let error):
            return .refusedSealed(error, exchange)
        }
    }

    /// The encryption step's decision on a request without `enc` to an account with an
    /// `aesSecretKey`: nil when it goes on as it is (nothing opened, nothing to seal), the 403
    /// when the account has `requireEncryption`. The one decision of both paths: `open` answers
    /// with it, and the fast path answers a plain request only when it is nil.
    static func plainRefusal(account: String, requireEncryption: Bool) -> APIError? {
        guard requireEncryption else { return nil }
        return APIError(.forbidden, "account '\(account)' requires encrypted requests: send enc=... (see docs/encryption.md)")
    }

    private static func notOpened(_ part: String) -> APIError {
        APIError(.unauthorized, "\(part) does not decrypt: changed on the way, or sealed with another key, method or path")
    }

    /// The arguments of a decrypted query string, read the way libmicrohttpd reads a URL's
    /// (`&`-separated `name=value`, `+` is a space, `%XX` escapes) but strictly: a bad escape,
    /// invalid UTF-8, a control character (NUL included), an empty or repeated name, or the
    /// name of an argument that belongs outside the encryption (`enc`, `kid`, `t`, `sign`) is
    /// a 400 rather than dropped.
    static func parseQuery(_ bytes: [UInt8]) -> Result<QueryArguments, APIError> {
        var query = QueryArguments()
        var seen: Set<String> = []
        for piece in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = piece.firstIndex(of: UInt8(ascii: "="))
            let rawName = piece[..<(equals ?? piece.endIndex)]
            let rawValue = equals.map { piece[piece.index(after: $0)...] } ?? []
            guard let name = decode(rawName), let value = decode(rawValue) else {
                return .failure(
                    APIError(.invalidParameter, "the decrypted query string has a bad %-escape, invalid UTF-8 or a control character"))
            }
            guard !name.isEmpty else {
                return .failure(APIError(.invalidParameter, "the decrypted query string has an argument without a name"))
            }
            guard name != argument, !signatureArguments.contains(name) else {
                return .failure(APIError(.invalidParameter, "'\(name)' cannot be inside the encrypted query string"))
            }
            guard seen.insert(name).inserted else {
                return .failure(APIError(.invalidParameter, "the decrypted query string repeats '\(name)'"))
            }
            query.append(name: name, value: value)
        }
        return .success(query)
    }

    /// `+` → space and `%XX` → byte, then UTF-8 without control characters (`DecodedArgument`,
    /// the rule of plain arguments too); nil otherwise.
    private static func decode(_ raw: ArraySlice<UInt8>) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index < raw.endIndex {
            let byte = raw[index]
            if byte == UInt8(ascii: "%") {
                guard raw.endIndex - index >= 3, let high = HexDigits.value(raw[index + 1]), let low = HexDigits.value(raw[index + 2])
                else { return nil }
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        guard DecodedArgument.firstControl(in: bytes) == nil else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
