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
    let clock: any WallClock
    let replays: ReplayGuard
    /// The HMAC keys of the secrets signatures were checked with.
    let preparedKeys = PreparedClientKeys()

    /// How many POST/DELETE signatures each account remembers (see `ReplayMemory`).
    static let replayCapacityPerAccount = 10_000

    init(clock: any WallClock, replayCapacityPerAccount: Int = Self.replayCapacityPerAccount) {
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
    /// work are the same either way. The general path's `HTTPRequest` and the fast path's
    /// borrowed head both come here; a signature is read and checked on the request's bytes,
    /// with nothing allocated unless it is refused.
    func authenticate<Request: SignedRequest>(_ request: Request, config: AccountConfig) -> Result<Authentication, APIError> {
        guard !config.clientKeys.isEmpty || config.requireSignedRequests else { return .success(.anonymous) }
        return request.withSignedParts { authenticate($0, config: config) }
    }

    private func authenticate(_ parts: SignedParts, config: AccountConfig) -> Result<Authentication, APIError> {
        let credentials: SignatureV1.BorrowedCredentials
        switch SignatureV1.presented(inParts: parts) {
        case .none:
            guard !config.requireSignedRequests else {
                return .failure(
                    Self.unauthorized(
                        "missing signature: this account requires signed requests (kid, t and sign arguments or an Authorization: \(SignatureV1.scheme) header)"
                    ))
            }
            return .success(.anonymous)
        case .malformed(let reason):
            return .failure(Self.unauthorized("malformed signature: \(reason)"))
        case .credentials(let value):
            credentials = value
        }
        let now = clock.now()
        let expiry = credentials.expirySeconds
        guard expiry >= now else {
            return .failure(
                Self.unauthorized(
                    "signature expired: t=\(Self.text(credentials.expiry)) is before the server's time \(Int(now)) (the Date header gives it)"
                ))
        }
        let key = config.clientKeys.first { credentials.keyID.hasSameBytes(as: $0.id) }
        let matches: Bool
        do {
            matches = try SignatureV1.verify(parts, credentials, key: try preparedKeys.key(for: key?.secret ?? Self.decoySecret))
        } catch {
            Log.error("client signature check: \(error)")
            return .failure(APIError(.internalError, "the signature could not be checked"))
        }
        guard let key, matches else { return .failure(Self.unauthorized(Self.badSignature)) }
        guard expiry - now <= config.maxSignatureAge else {
            return .failure(
                Self.unauthorized(
                    "signature expiry too far ahead: t=\(Self.text(credentials.expiry)) is more than maxSignatureAge (\(Int(config.maxSignatureAge)) s) after the server's time \(Int(now))"
                ))
        }
        return .success(.key(id: key.id, role: key.role))
    }

    private static func text(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }

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

    /// For a signed change without Redis: refuses a signature already used (401), or a new one
    /// while the account's replay memory, or the key's or the client's share of it, is full of
    /// live signatures (503 with `Retry-After`).
    func checkReplay(_ change: SignedChange) -> APIError? {
        let now = clock.now()
        let outcome = replays.use(
            Array(change.signature.utf8), expiry: change.expiry, key: change.keyID, client: change.client, account: change.account, now: now
        )
        switch outcome {
        case .accepted:
            return nil
        case .replayed:
            return Self.replayed
        case .full(let limit, let until):
            let wait = max(1, Int((until - now).rounded(.up)))
            let whose: String
            switch limit {
            case .account: whose = "for this account"
            case .key: whose = "for key '\(change.keyID)' (one key may hold half of the account's)"
            case .client: whose = "from this client (one client may hold a quarter of the account's)"
            }
            return APIError(
                .serviceUnavailable, "too many signed changes in flight \(whose): try again in \(wait) s",
                headers: [("Retry-After", String(wait))])
        }
    }

    /// A signature used before (locally or, with Redis, on any replica).
    static let replayed = unauthorized("replayed signature: a POST, PUT or DELETE signature is accepted once within its validity")
}

/// A signed request to a route that changes state (`Route.isSignedChange`): what its replay
/// check needs.
struct SignedChange: Sendable {
    var account: String
    var keyID: String
    /// Lower-case hex, as sent.
    var signature: String
    /// Unix seconds.
    var expiry: Timestamp
    /// The client as the rate limit sees it (the peer, or `X-Forwarded-For` of a trusted proxy).
    var client: PeerAddress?
}
