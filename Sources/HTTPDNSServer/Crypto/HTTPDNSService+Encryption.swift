import HTTPDNSCore

extension HTTPDNSService {
    /// What the encryption step decided for a request.
    enum Opening {
        /// Go on to the handler with this match (its request decrypted when it was encrypted).
        case proceed(Route.Match)
        /// Answer this at once: plain when nothing could be opened, sealed when it was.
        case answer(HTTPResponse)
    }

    /// The encryption step of the pipeline, after authentication and before the handler
    /// (docs/encryption.md): a tenant request with `enc` is opened, authorised again on its
    /// decrypted arguments, and handed on with them and the exchange its answer is sealed with;
    /// a plain one goes on unchanged unless the account has `requireEncryption` (403). Accounts
    /// without `aesSecretKey` pay one flag and one argument lookup.
    func openRequest(_ route: Route, _ match: consuming Route.Match) -> Opening {
        guard let engine = match.engine,
            engine.lookupOptions.hasAESKey || match.request.query[RequestOpening.argument] != nil
        else { return .proceed(consume match) }
        let config = engine.config
        switch RequestOpening.open(
            match.request, account: engine.accountID, key: config.aesKey, requireEncryption: config.requireEncryption)
        {
        case .plain:
            return .proceed(consume match)
        case .refused(let error):
            return .answer(route.format.response(error))
        case .refusedSealed(let error, let exchange):
            return .answer(exchange.seal(route.format.response(error)))
        case .opened(let request, let exchange):
            if let role = route.access.role(for: request),
                let refusal = authenticator.authorise(match.authentication, required: role)
            {
                return .answer(exchange.seal(route.format.response(refusal)))
            }
            match.received = Route.Received(match.request)
            match.request = request
            match.encryption = exchange
            return .proceed(consume match)
        }
    }

    /// The handler's answer on its way out, now or deferred: sealed when the request was
    /// encrypted, else unchanged.
    func sealResponse(_ result: HandlerResult, _ match: Route.Match) -> HandlerResult {
        guard let exchange = match.encryption else { return result }
        return exchange.seal(result)
    }
}
