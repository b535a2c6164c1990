import HTTPDNSCore
import HTTPDNSCrypto

/// The DoH JSON signature, the authentication step of its routes.
extension HTTPDNSService {
    /// The authentication step of the DoH JSON API. A request carrying any of `ak`, `ts`, `key`
    /// is signed and must carry all of them and `uid`: `ak` names a client key of the account
    /// whose role allows resolve, `ts` (when it was signed, Unix seconds) is within
    /// `maxSignatureAge` of the server's time in either direction, and `key` is
    /// `DoHJSONSignature.key` over `uid`, the key's secret, `ts`, `name` and `ak` as sent. An
    /// unsigned request passes unless the account has `requireSignedRequests`.
    /// The general path's `HTTPRequest` and the fast path's borrowed head both come here
    /// (`SignedRequest`); the arguments the signature covers are read as the bytes sent.
    func authenticateDoHJSON(_ request: some SignedRequest, config: AccountConfig) -> Result<Authentication, APIError> {
        request.withSignedParts { authenticateDoHJSON($0, config: config) }
    }

    /// The same on the request's parts (`authenticateTenant` calls it so, with the account's
    /// configuration read in place inside the parts' closure).
    func authenticateDoHJSON(_ parts: SignedParts, config: AccountConfig) -> Result<Authentication, APIError> {
        guard parts.argument("ak") != nil || parts.argument("ts") != nil || parts.argument("key") != nil else {
            guard !config.requireSignedRequests else {
                return .failure(
                    APIError(.invalidSignature, "missing signature: this account requires signed requests (uid, ak, ts and key arguments)"))
            }
            return .success(.anonymous)
        }
        // As text from here: `DoHJSONSignature.key` (shared with the upstream client) takes its
        // parts so, and a key id compares with `ak` as text does.
        guard let uid = parts.argument("uid").map(Self.string), let keyID = parts.argument("ak").map(Self.string),
            let timestamp = parts.argument("ts").map(Self.string), let presented = parts.argument("key").map(Self.string)
        else {
            return .failure(APIError(.invalidSignature, "malformed signature: a signed request needs all of uid, ak, ts and key"))
        }
        guard !config.clientKeys.isEmpty || config.requireSignedRequests else {
            return .failure(
                APIError(.invalidSignature, "this account has no clientKeys to check a signature with: send the request unsigned"))
        }
        guard (1...12).contains(timestamp.utf8.count), timestamp.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let seconds = Double(timestamp)
        else {
            return .failure(APIError(.invalidSignature, "ts must be the signing time in Unix seconds (digits only)"))
        }
        // The key, its role and `maxSignatureAge` are the account's: they are looked at after the
        // digest, which an unknown `ak` (or a missing account) computes with a decoy secret.
        let key = config.clientKeys.first { $0.id == keyID }
        let matches: Bool
        do {
            let expected = try DoHJSONSignature.key(
                uid: uid, secret: key?.secret ?? ClientAuthenticator.decoySecret, timestamp: timestamp,
                name: parts.argument("name").map(Self.string) ?? "",
                accessKeyID: keyID)
            matches = Digest.constantTimeEquals(Array(expected.utf8), Array(presented.lowercased().utf8))
        } catch {
            Log.error("DoH JSON signature check: \(error)")
            return .failure(APIError(.internalError, "the signature could not be checked"))
        }
        guard let key, matches else {
            return .failure(
                APIError(
                    .invalidSignature,
                    "bad signature: key is not sha256(uid + secret + ts + name + ak) for a client key of this account named by ak"))
        }
        guard key.role.allows(.resolve) else {
            return .failure(APIError(.forbidden, "key '\(key.id)' has role \(key.role.rawValue); this endpoint needs resolve"))
        }
        return checkDoHJSONTime(timestamp, seconds, config: config).map { .failure($0) } ?? .success(.key(id: key.id, role: key.role))
    }

    /// `ts` within `maxSignatureAge` of the server's time in either direction, else the refusal.
    private func checkDoHJSONTime(_ timestamp: String, _ seconds: Double, config: AccountConfig) -> APIError? {
        let now = authenticator.clock.now()
        guard now - seconds <= config.maxSignatureAge else {
            return APIError(
                .signatureExpired,
                "signature expired: ts=\(timestamp) is more than maxSignatureAge (\(Int(config.maxSignatureAge)) s) before the server's time \(Int(now))"
            )
        }
        guard seconds - now <= config.maxSignatureAge else {
            return APIError(
                .invalidSignature,
                "ts too far ahead: ts=\(timestamp) is more than maxSignatureAge (\(Int(config.maxSignatureAge)) s) after the server's time \(Int(now))"
            )
        }
        return nil
    }
}
