import HTTPDNSCore

/// The EMAS HTTPDNS API (`docs/emas.md`) over the same engines, caches and statistics as API v1.
extension HTTPDNSService {
    /// The most hosts one `/resolve` or `/sign_resolve` may ask (the EMAS API's limit).
    static let emasMaxHosts = 5

    /// `GET /{account}/d`, `/sign_d` (`batch` false: one host) and `/resolve`, `/sign_resolve`
    /// (a comma-separated list). Arguments: `host`, `query` (`4`, `6`, `4,6` in any order; absent
    /// means 4), `ip` (the client's address: picks the per-network cache under `ispEnable` and is
    /// echoed as `client_ip`; else the peer, after the trusted-proxy rule). Others are ignored.
    /// Cache hits of `/d` and `/sign_d` are answered by `emasHit` with the same writer.
    func emasResolve(_ request: HTTPRequest, engine: ResolverEngine, batch: Bool) throws(APIError) -> HandlerResult {
        guard let hostText = request.query["host"], !hostText.isEmpty else {
            throw APIError(.missingArgument, "the 'host' argument is required")
        }
        let names = batch ? hostText.split(separator: ",", omittingEmptySubsequences: true) : [Substring(hostText)]
        guard names.count <= Self.emasMaxHosts else {
            throw APIError(.tooManyHosts, "at most \(Self.emasMaxHosts) hosts per request, got \(names.count)")
        }
        var hosts: [HostName] = []
        for name in names {
            guard let host = HostName(name) else {
                throw APIError(.invalidHost, "'\(name)' is not a valid host name (RFC 1035; IDN must be punycode)")
            }
            hosts.append(host)
        }
        guard !hosts.isEmpty else { throw APIError(.missingArgument, "the 'host' argument names no host") }
        let families = try Self.emasFamilies(request.query["query"]).get()
        let (clientIP, network) = emasClient(
            ip: request.query["ip"], forwardedFor: request.forwardedFor, peer: request.peerAddress, options: engine.lookupOptions)
        return lookUp(hosts, families, engine: engine, network: network, from: request) { results in
            batch ? EMASRendering.batch(results) : EMASRendering.single(results[0], clientIP: clientIP)
        }
    }

    /// The client's address an EMAS request names, as the `client_ip` it echoes (`""` when none
    /// is known), and its network when the account has `ispEnable` (else `""`): `ip` when it is an
    /// address, else the peer (or, from a trusted proxy, the address `X-Forwarded-For` names).
    func emasClient(
        ip: String?, forwardedFor: String?, peer: PeerAddress?, options: ResolverEngine.LookupOptions
    ) -> (clientIP: String, network: String) {
        let address = ClientNetwork.selectAddress(
            clientIP: ip, forwardedFor: forwardedFor, peer: peer?.ipAddress, trustedProxies: limits.trustedProxies)
        return (address.map(\.description) ?? "", options.ispEnable ? address.map(ClientNetwork.network(of:)) ?? "" : "")
    }

    /// The hit reader of `GET /{account}/d` and `/sign_d` (`HitReader`): one host, one
    /// family (for `ispEnable`, of the client's network), written by `EMASRendering.fastSingle`
    /// (the general path's writer), the client chosen by `emasClient` as there. Nil for anything
    /// else: both families, an invalid argument, `enc`. Other arguments are ignored, as on the
    /// general path. `sign_d` always runs the general signature check.
    func emasHit<Head: RequestHead>(_ head: Head, _ request: HitRequest) -> FastResponse? {
        typealias Name = HitReader.EMAS
        let arguments = request.arguments, options = request.options
        guard arguments[Name.enc] == nil, let hostText = arguments[Name.host], hostText.count > 0,
            case .success(let families) = Self.emasFamilies(arguments[Name.query].map(Self.string)), families.count == 1
        else {
            return nil
        }
        let (clientIP, network) = emasClient(
            ip: arguments[Name.ip].map(Self.string), forwardedFor: hitForwardedFor(head), peer: head.peerAddress,
            options: options)
        let family = families[0]
        let needsAdmit = request.route.pointee.access == .emasSigned || options.hasClientKeys || options.hasAESKey
        return answerHit(head, request, host: hostText, family: family, network: network, needsAdmit: needsAdmit) { host, answer in
            EMASRendering.fastSingle(host: host, family: family, answer: answer, clientIP: clientIP)
        }
    }

    /// The families of an EMAS `query` argument: `4` (also when absent or empty), `6`, or both
    /// (`4,6`, `6,4`; `%2C` arrives decoded). Anything else, a family given twice or an empty
    /// part included (`4,6,4`, `4,4`, `4,`), is refused.
    static func emasFamilies(_ query: String?) -> Result<[RecordFamily], APIError> {
        guard let query, !query.isEmpty else { return .success([.a]) }
        var families: [RecordFamily] = []
        for part in query.split(separator: ",", omittingEmptySubsequences: false) {
            let family: RecordFamily
            switch part.trimmingWhitespace() {
            case "4": family = .a
            case "6": family = .aaaa
            default: return .failure(Self.badQuery(query))
            }
            guard !families.contains(family) else { return .failure(Self.badQuery(query)) }
            families.append(family)
        }
        return .success(families.sorted { $0 == .a && $1 == .aaaa })
    }

    private static func badQuery(_ query: String) -> APIError {
        APIError(.invalidParameter, "query must be 4, 6 or 4,6, got '\(query)'")
    }

    /// `GET /{account}/ss`: the service addresses clients should use next.
    func emasServiceAddresses() -> HTTPResponse {
        EMASRendering.serviceAddresses(limits.advertisedAddresses)
    }

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

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
