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

    /// What the limit step decided for one tenant request, before any authentication work or
    /// cache lookup.
    enum LimitDecision {
        /// No limit applies: nothing was taken.
        case free
        /// A token was taken from this client's bucket: given back (`refund`) by a cached hit
        /// that is left to the general path after all, which then charges the request itself.
        case charged(PeerAddress, ClientRateLimiter.Rate)
        /// The client is over its rate: 429 with `Retry-After` (`refusal`).
        case refused(retryAfter: Int, ClientRateLimiter.Rate)
    }

    /// The limit step of every tenant request, the general path's and the cached hit's: the
    /// client (the peer, or the address `X-Forwarded-For` names when the peer is a trusted
    /// proxy; `peer` is read only when a limit applies, `forwardedFor` only for a trusted proxy) takes one token of its bucket for `account` (the
    /// empty name: requests to no known account, which share one bucket per client), at the rate
    /// of the account whose `options` these are (nil: the service's).
    func limitDecision(
        peer: () -> PeerAddress?, forwardedFor: () -> String?, account: UnsafeRawBufferPointer, options: ResolverEngine.LookupOptions?
    ) -> LimitDecision {
        let rate = clientRate(options)
        guard rate.isLimited, let peer = peer() else { return .free }
        let client = clients.keying.key(clients.peer(peer, forwardedFor: forwardedFor))
        switch rateLimiter.take(account: account, address: client, rate: rate) {
        case .allowed: return .charged(client, rate)
        case .refused(let retryAfter): return .refused(retryAfter: retryAfter, rate)
        }
    }

    /// 429 when the client of a tenant request to `engine`'s account (nil: to no known account)
    /// is over its rate (`limitDecision`), counted; else nil (the request goes on).
    func rateLimitRejection(for request: HTTPRequest, engine: ResolverEngine?) -> APIError? {
        var account = engine?.accountID ?? ""
        let decision = account.withUTF8 { account in
            limitDecision(
                peer: { request.peerAddress }, forwardedFor: { request.forwardedFor }, account: UnsafeRawBufferPointer(account),
                options: engine?.lookupOptions)
        }
        guard case .refused(let retryAfter, let rate) = decision else { return nil }
        return refuseClient(engine, rate: rate, retryAfter: retryAfter)
    }

    /// Gives back the token `decision` took for `account`.
    func refund(_ decision: LimitDecision, account: UnsafeRawBufferPointer) {
        if case .charged(let client, let rate) = decision { rateLimiter.refund(account: account, address: client, rate: rate) }
    }

    private func refuseClient(_ engine: ResolverEngine?, rate: ClientRateLimiter.Rate, retryAfter: Int) -> APIError {
        if let engine { engine.metrics.clientRateRefusals.increment() } else { unknownAccountRefusals.increment() }
        let perSecond = rate.perSecond == rate.perSecond.rounded() ? String(Int(rate.perSecond)) : String(rate.perSecond)
        return APIError.rateLimited(
            retryAfter: retryAfter, "too many requests from this client (rateLimit \(perSecond)/s, burst \(Int(rate.burstTokens)))")
    }
}
