import HTTPDNSCore

extension APIError {
    /// 429 `RateLimited` with `Retry-After` (whole seconds, at least 1).
    static func rateLimited(retryAfter: Int, _ message: String) -> APIError {
        let seconds = max(1, retryAfter)
        return APIError(.rateLimited, "\(message); retry after \(seconds) s", headers: [("Retry-After", String(seconds))])
    }
}

extension HTTPDNSService {
    /// The client rate in force for requests to `options`' account (nil: no known account): the
    /// account's `rateLimit`/`rateBurst` where set, else the service's. An account that sets
    /// `rateLimit` but not `rateBurst` gets twice its rate as burst, not the service's burst.
    func clientRate(_ options: ResolverEngine.LookupOptions?) -> ClientRateLimiter.Rate {
        guard let options, options.rateLimit != nil || options.rateBurst != nil else { return limits.clientRate }
        return ClientRateLimiter.Rate(
            perSecond: options.rateLimit ?? limits.clientRate.perSecond,
            burst: options.rateBurst ?? (options.rateLimit == nil ? limits.clientRate.burst : 0))
    }

    /// 429 when the client of a tenant request to `engine`'s account (nil: to no known account)
    /// is over its rate, else nil (the request goes on). The client is the peer, or, when the
    /// peer is a trusted proxy, the address `X-Forwarded-For` names (never `client_ip`, which a
    /// client chooses freely). Requests to no known account share one bucket per client.
    func rateLimitRejection(for request: HTTPRequest, engine: ResolverEngine?) -> APIError? {
        let rate = clientRate(engine?.lookupOptions)
        guard rate.isLimited, let address = rateLimitedAddress(request) else { return nil }
        let decision = rateLimiter.take(account: engine?.accountID ?? "", address: address, rate: rate)
        guard case .refused(let retryAfter) = decision else { return nil }
        return refuseClient(engine, rate: rate, retryAfter: retryAfter)
    }

    /// What the fast path's limit step decided, before its cache lookup.
    enum FastAdmission {
        /// No limit applies: nothing to give back.
        case free
        /// A token was taken: given back (`fastPathRefund`) when the lookup misses, since the
        /// general path then charges the request itself.
        case charged(PeerAddress, ClientRateLimiter.Rate)
        /// Leave the request to `handle`: refused (it answers 429 and counts it), or from a
        /// trusted proxy, whose `X-Forwarded-For` the fast path does not read.
        case toGeneralPath
    }

    /// The fast path's limit step, before the cache lookup (so a refused request is not
    /// counted as a hit): one hashed lookup and a short striped lock; nothing when no limit
    /// applies.
    func fastPathAdmission<Head: RequestHead>(
        _ head: Head, account: UnsafeRawBufferPointer, options: ResolverEngine.LookupOptions
    ) -> FastAdmission {
        let rate = clientRate(options)
        guard rate.isLimited, let peer = head.peerAddress else { return .free }
        if !limits.trustedProxies.isEmpty && ClientNetwork.isTrusted(peer.ipAddress, limits.trustedProxies) { return .toGeneralPath }
        return rateLimiter.take(account: account, address: peer, rate: rate) == .allowed ? .charged(peer, rate) : .toGeneralPath
    }

    /// Gives back the token of a fast-path request that missed the cache.
    func fastPathRefund(_ admission: FastAdmission, account: UnsafeRawBufferPointer) {
        if case .charged(let peer, let rate) = admission { rateLimiter.refund(account: account, address: peer, rate: rate) }
    }

    /// The client a request's rate is counted for (also its share of the replay memory).
    func rateLimitedAddress(_ request: HTTPRequest) -> PeerAddress? {
        guard let peer = request.peerAddress else { return nil }
        guard request.forwardedFor != nil, !limits.trustedProxies.isEmpty else { return peer }
        return ClientNetwork.selectAddress(
            clientIP: nil, forwardedFor: request.forwardedFor, peer: peer.ipAddress, trustedProxies: limits.trustedProxies
        ).map(PeerAddress.init) ?? peer
    }

    private func refuseClient(_ engine: ResolverEngine?, rate: ClientRateLimiter.Rate, retryAfter: Int) -> APIError {
        if let engine { engine.metrics.clientRateRefusals.increment() } else { unknownAccountRefusals.increment() }
        let perSecond = rate.perSecond == rate.perSecond.rounded() ? String(Int(rate.perSecond)) : String(rate.perSecond)
        return APIError.rateLimited(
            retryAfter: retryAfter, "too many requests from this client (rateLimit \(perSecond)/s, burst \(Int(rate.burstTokens)))")
    }
}
