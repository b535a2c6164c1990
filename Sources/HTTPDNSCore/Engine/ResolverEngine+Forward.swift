extension ResolverEngine {
    /// Passes a DNS query the cache does not hold (a type other than A and AAAA) to the
    /// account's upstreams as it is (`UpstreamChain.forward`) and completes with their reply,
    /// on an upstream thread. The account's upstream budget (`upstreamQPS`, `client`'s share of
    /// it) and timeout apply; nothing is cached.
    public func forward(
        _ message: [UInt8], client: ClientID? = nil, completion: @escaping @Sendable (Result<[UInt8], ResolveFailure>) -> Void
    ) {
        let settings = current
        let config = settings.config
        if let retryAfter = budgetRefusal(for: client, config: config) {
            metrics.upstreamBudgetRefusals.increment()
            completion(
                .failure(
                    ResolveFailure(
                        timedOut: false, message: "the account's upstream budget (upstreamQPS \(config.upstreamQPS)) is spent",
                        retryAfter: retryAfter)))
            return
        }
        settings.chain.forward(message, timeoutMilliseconds: config.timeoutMilliseconds) { [self] result in
            switch result {
            case .success(let reply):
                completion(.success(reply))
            case .failure(let error):
                metrics.resolveFailures.increment()
                completion(.failure(ResolveFailure(timedOut: error.code == .timeout, message: error.description)))
            }
        }
    }
}
