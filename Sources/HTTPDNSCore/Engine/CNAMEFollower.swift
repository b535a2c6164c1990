/// Resolves the target of a reply that ended in a CNAME without records of the asked type, as a
/// recursive resolver would: link by link through the account's upstream chain, at most
/// `maximumLinks` names after the asked one, stopping at a name already visited. The answer
/// carries the minimum TTL over the whole chain. A chain that loops or is too long ends as a
/// NODATA answer (negative-cached for the chain's TTL, at most `maxNegativeCache`); a target that
/// does not exist ends as NXDOMAIN. Pure control flow: the upstreams do the I/O.
enum CNAMEFollower {
    /// CNAME targets followed after the asked name (a resolver's usual bound is 8 to 16).
    static let maximumLinks = 8

    /// How a chain ended when it did not end in records or a negative answer from an upstream.
    enum Stop: Sendable, Equatable {
        case loop(HostName)
        case tooLong
    }

    /// True when `answer` is a dangling CNAME the engine must follow.
    static func isDangling(_ answer: UpstreamAnswer) -> Bool {
        answer.cnameTarget != nil && answer.isNegative && !answer.nxdomain
    }

    /// Follows `answer` (a dangling CNAME for `query`); `completion` gets the final outcome and,
    /// when the chain was cut, why.
    static func follow(
        _ answer: UpstreamAnswer, source: AnswerSource, query: UpstreamQuery, chain: UpstreamChain, clock: any WallClock,
        report: @escaping @Sendable (ChainEvent) -> Void,
        completion: @escaping @Sendable (ChainOutcome, Stop?) -> Void
    ) {
        step(
            answer, source: source, query: query, visited: [query.host], chainTTL: answer.ttl, chain: chain, clock: clock,
            report: report, completion: completion)
    }

    private static func step(
        _ answer: UpstreamAnswer, source: AnswerSource, query: UpstreamQuery, visited: Set<HostName>, chainTTL: UInt32?,
        chain: UpstreamChain, clock: any WallClock,
        report: @escaping @Sendable (ChainEvent) -> Void,
        completion: @escaping @Sendable (ChainOutcome, Stop?) -> Void
    ) {
        guard isDangling(answer), let target = answer.cnameTarget else {
            completion(.answered(capped(answer, by: chainTTL), source: source), nil)
            return
        }
        if visited.contains(target) {
            completion(.answered(cut(chainTTL), source: source), .loop(target))
            return
        }
        if visited.count > maximumLinks {
            completion(.answered(cut(chainTTL), source: source), .tooLong)
            return
        }
        var next = query
        next.host = target
        chain.resolve(next, clock: clock, report: report) { outcome in
            switch outcome {
            case .answered(let followed, let followedSource):
                let ttl = min(chainTTL ?? followed.ttl ?? .max, followed.ttl ?? chainTTL ?? .max)
                step(
                    followed, source: followedSource, query: query, visited: visited.union([target]),
                    chainTTL: ttl == .max ? nil : ttl, chain: chain, clock: clock, report: report, completion: completion)
            case .failed:
                completion(outcome, nil)
            }
        }
    }

    /// The final answer with the chain's TTL: a positive answer lives no longer than any link;
    /// a negative one is cached no longer than the chain either, and is cached at all (a NODATA
    /// without an SOA would otherwise not be).
    /// (`UInt32.max` stands for "no bound here": the engine caps it at `maxNegativeCache`.)
    private static func capped(_ answer: UpstreamAnswer, by chainTTL: UInt32?) -> UpstreamAnswer {
        var capped = answer
        if answer.isNegative {
            capped.negativeTTL = min(answer.negativeTTL ?? .max, chainTTL ?? .max)
        } else if let chainTTL {
            capped.ttl = min(answer.ttl ?? chainTTL, chainTTL)
        }
        return capped
    }

    /// The NODATA answer of a chain that loops or is too long, negative-cached for its TTL.
    private static func cut(_ chainTTL: UInt32?) -> UpstreamAnswer {
        UpstreamAnswer(addresses: [], ttl: nil, negativeTTL: chainTTL ?? .max)
    }
}
