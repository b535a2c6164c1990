import HTTPDNSCore

/// The EMAS signature, the authentication step of `sign_d` and `sign_resolve`.
extension HTTPDNSService {
    /// The authentication step of `sign_d` and `sign_resolve`: `t` (expiry, Unix seconds) within
    /// `[now, now + maxSignatureAge]`, and `s` the EMAS signature of the `host` argument with one
    /// of the account's client keys (every key may resolve). An account without client keys
    /// cannot check a signature: its signed paths are refused (its unsigned ones are open); the
    /// stand-in for a missing account (`AccountConfig.hidden`) is refused as a wrong signature,
    /// after one decoy digest. `maxSignatureAge`, the account's own, is checked after the digest.
    /// The general path's `HTTPRequest` and the fast path's borrowed head both come here
    /// (`SignedRequest`): the arguments are read as the bytes sent, nothing copied.
    func authenticateEMAS(_ request: some SignedRequest, config: AccountConfig) -> Result<Authentication, APIError> {
        request.withSignedParts { authenticateEMAS($0, config: config) }
    }

    /// The same on the request's parts (`authenticateTenant` calls it so, with the account's
    /// configuration read in place inside the parts' closure).
    func authenticateEMAS(_ parts: SignedParts, config: AccountConfig) -> Result<Authentication, APIError> {
        guard let expiry = parts.argument("t"), let presented = parts.argument("s") else {
            return .failure(APIError(.invalidSignature, "signed paths need the 't' (expiry) and 's' (signature) arguments"))
        }
        guard !config.clientKeys.isEmpty || config.requireSignedRequests else {
            return .failure(APIError(.invalidSignature, "this account has no clientKeys to check a signature with: use /d and /resolve"))
        }
        guard (1...12).contains(expiry.count), expiry.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return .failure(APIError(.invalidSignature, "t must be the expiry in Unix seconds (digits only)"))
        }
        // At most 12 digits: exact as a `Double`, as `Double(String)` reads them.
        let seconds = SignatureV1.BorrowedCredentials.seconds(expiry)
        let now = authenticator.clock.now()
        guard seconds >= now else {
            return .failure(
                APIError(.signatureExpired, "signature expired: t=\(Self.string(expiry)) is before the server's time \(Int(now))"))
        }
        let hosts = parts.argument("host") ?? UnsafeRawBufferPointer(start: nil, count: 0)
        var signer: ClientKey?
        do {
            // The first resolve key that made it; with none that may resolve, one decoy digest.
            var checked = false
            for key in config.clientKeys where key.role.allows(.resolve) {
                checked = true
                if try EMASSignature.matches(presented, hosts: hosts, secret: key.secret, expiry: expiry) {
                    signer = key
                    break
                }
            }
            if !checked {
                _ = try EMASSignature.matches(presented, hosts: hosts, secret: ClientAuthenticator.decoySecret, expiry: expiry)
            }
        } catch {
            Log.error("EMAS signature check: \(error)")
            return .failure(APIError(.internalError, "the signature could not be checked"))
        }
        guard let signer else { return .failure(APIError(.invalidSignature, Self.badEMASSignature)) }
        guard seconds - now <= config.maxSignatureAge else {
            return .failure(
                APIError(
                    .invalidSignature,
                    "signature expiry too far ahead: t=\(Self.string(expiry)) is more than maxSignatureAge (\(Int(config.maxSignatureAge)) s) after the server's time \(Int(now))"
                ))
        }
        return .success(.key(id: signer.id, role: signer.role))
    }

    /// The refusal of an EMAS signature that no key of the account made (a missing account's too).
    static let badEMASSignature = "bad signature: s is not md5(host + \"-\" + secret + \"-\" + t) for any client key of this account"
}
