import HTTPDNSCore
import HTTPDNSCrypto

/// Who made a tenant request, as far as the service checked.
public enum Authentication: Sendable, Equatable {
    /// No signature was checked: the account is open (no `clientKeys`), or the request is
    /// unsigned and the account does not require signatures.
    case anonymous
    /// A valid signature made with this key.
    case key(id: String, role: ClientKey.Role)
}

/// Checks client signatures (`SignatureV1`) against an account's `clientKeys`, its roles, and
/// the replay memory. Time comes from the injected clock.
struct ClientAuthenticator: Sendable {
    let clock: any Clock
    let replays: ReplayGuard
    /// The HMAC keys of the secrets signatures were checked with.
    let preparedKeys = PreparedClientKeys()

    /// How many POST/DELETE signatures each account remembers (see `ReplayMemory`).
    static let replayCapacityPerAccount = 10_000

    init(clock: any Clock, replayCapacityPerAccount: Int = Self.replayCapacityPerAccount) {
        self.clock = clock
        self.replays = ReplayGuard(capacityPerAccount: replayCapacityPerAccount)
    }

    static func unauthorized(_ message: String) -> APIError {
        APIError(.unauthorized, message, headers: [("WWW-Authenticate", SignatureV1.scheme)])
    }

    /// What every signature that no key of the account made is refused with: the same whether
    /// the key id is unknown, the signature wrong, or the account missing (while accounts are
    /// hidden), so that a caller without a key learns nothing of which ids exist.
    static let badSignature = "bad signature: no key of this account made it for this request (signature v1, see docs/security.md)"

    /// Verifies the request's signature, if the account has keys and the request carries one or
    /// the account requires it. An account without `clientKeys` is open: signatures are not read
    /// (`AccountConfig.hidden`, which stands for a missing account, has no key but requires them).
    /// The checks that depend on the account (its key ids, `maxSignatureAge`) come after the
    /// HMAC, which is computed with a decoy key when the key id is unknown: the answer and the
    /// work are the same either way.
    func authenticate(_ request: HTTPRequest, config: AccountConfig) -> Result<Authentication, APIError> {
        guard !config.clientKeys.isEmpty || config.requireSignedRequests else { return .success(.anonymous) }
        let credentials: SignatureV1.Credentials
        switch SignatureV1.presented(in: request) {
        case .none:
            guard !config.requireSignedRequests else {
                return .failure(Self.unauthorized(
                    "missing signature: this account requires signed requests (kid, t and sign arguments or an Authorization: \(SignatureV1.scheme) header)"))
            }
            return .success(.anonymous)
        case .malformed(let reason):
            return .failure(Self.unauthorized("malformed signature: \(reason)"))
        case .credentials(let value):
            credentials = value
        }
        let now = clock.now()
        let expiry = Double(credentials.expiry)!  // digits only, at most 12 (checked by `presented`)
        guard expiry >= now else {
            return .failure(Self.unauthorized(
                "signature expired: t=\(credentials.expiry) is before the server's time \(Int(now)) (the Date header gives it)"))
        }
        let key = config.clientKeys.first { $0.id == credentials.keyID }
        let matches: Bool
        do {
            matches = try SignatureV1.verify(request, credentials, key: try preparedKeys.key(for: key?.secret ?? Self.decoySecret))
        } catch {
            Log.error("client signature check: \(error)")
            return .failure(APIError(.internalError, "the signature could not be checked"))
        }
        guard let key, matches else { return .failure(Self.unauthorized(Self.badSignature)) }
        guard expiry - now <= config.maxSignatureAge else {
            return .failure(Self.unauthorized(
                "signature expiry too far ahead: t=\(credentials.expiry) is more than maxSignatureAge (\(Int(config.maxSignatureAge)) s) after the server's time \(Int(now))"))
        }
        return .success(.key(id: key.id, role: key.role))
    }

    /// The secret an unknown key id's signature is checked with, so that it costs what a known
    /// one does; random for each process and never a match (the key is unknown).
    static let decoySecret: String = {
        var generator = SystemRandomNumberGenerator()
        return String((0..<32).map { _ in "0123456789abcdef".randomElement(using: &generator)! })
    }()

    /// Whether `authentication` may call a route that needs `required`. Anonymous requests reach
    /// this only where the account lets them in (open, or signatures not required).
    func authorise(_ authentication: Authentication, required: ClientKey.Role) -> APIError? {
        guard case .key(let id, let role) = authentication, !role.allows(required) else { return nil }
        return APIError(.forbidden, "key '\(id)' has role \(role.rawValue); this endpoint needs \(required.rawValue)")
    }

    /// For a signed POST or DELETE: refuses a signature already used (401), or any new one while
    /// the account's replay memory is full of live signatures (503 with `Retry-After`).
    func checkReplay(_ request: HTTPRequest, _ authentication: Authentication, account: String) -> APIError? {
        guard case .key = authentication, request.method == "POST" || request.method == "DELETE",
              case .credentials(let credentials) = SignatureV1.presented(in: request),
              let expiry = Double(credentials.expiry) else { return nil }
        let now = clock.now()
        switch replays.use(Array(credentials.signature.utf8), expiry: expiry, account: account, now: now) {
        case .accepted:
            return nil
        case .replayed:
            return Self.unauthorized("replayed signature: a POST or DELETE signature is accepted once within its validity")
        case .full(let until):
            let wait = max(1, Int((until - now).rounded(.up)))
            return APIError(
                .serviceUnavailable, "too many signed changes in flight for this account: try again in \(wait) s",
                headers: [("Retry-After", String(wait))])
        }
    }
}
