import HTTPDNSCore

/// The lookup every name-resolving handler shares: the cache first, the upstreams for the rest.
struct Lookups: Sendable {
    let clients: ClientRules
    /// What the `countries`, `regions` and `asns` conditions of `rules` read (nil: no database).
    var geo: (any GeoLookup)?

    /// Every (host, family) through the engine, in any wire format: answered at once when the
    /// cache has everything, else deferred until the last upstream answer is in; `render` gets
    /// one result per host, in order. The cache is asked first for every pair without closures;
    /// only the pairs it cannot answer go to the upstreams, so a request that hits allocates no
    /// gather, slot or completion. The misses take from the upstream budget's share of
    /// `request`'s client (`ClientRules.id`). A name the account's `domains` refuses is a
    /// failure (`ResolveFailure.notAllowed`), cached or not, which each format's rendering
    /// writes as its refusal; neither the cache nor an upstream is asked for it.
    func lookUp(
        _ hosts: [HostName], _ families: [RecordFamily], engine: ResolverEngine, network: String, from request: HTTPRequest,
        clientAddress: () -> IPAddress?, render: @escaping @Sendable ([HostResult]) -> HTTPResponse
    ) -> HandlerResult {
        lookUp(
            hosts, families, engine: engine, network: network, client: { clients.id(of: request) },
            ruleClient: { RuleClient(address: clientAddress(), params: Self.ruleParams(request.query)) }, render: render)
    }

    /// The same for a client known apart from an HTTP request (plain DNS): `client` is read only
    /// when a pair misses, `ruleClient` only when one of the account's `rules` names a host.
    /// A name a rule answers (`ResolverEngine.ruleAnswer`) is answered by it, after the
    /// `domains` decision and before the cache; its `extra` goes with its `HostResult`.
    func lookUp(
        _ hosts: [HostName], _ families: [RecordFamily], engine: ResolverEngine, network: String, client: () -> ClientID?,
        ruleClient: () -> RuleClient, render: @escaping @Sendable ([HostResult]) -> HTTPResponse
    ) -> HandlerResult {
        // Pair `index` is host `index / families.count` in family `index % families.count`: read
        // in place rather than listed in an array of its own.
        let pairCount = hosts.count * families.count
        func pair(_ index: Int) -> (HostName, RecordFamily) { (hosts[index / families.count], families[index % families.count]) }
        var cached: [Lookup] = []
        cached.reserveCapacity(pairCount)
        let options = engine.lookupOptions
        var extras: [String?] = []
        var asker: RuleClient?
        for index in 0..<pairCount {
            let (host, family) = pair(index)
            if options.hasDomainPolicy && !engine.allows(host) {
                cached.append(.answered(.failure(.notAllowed(host))))
                continue
            }
            if options.hasRules && engine.hasRule(for: host) {
                if asker == nil { asker = ruleClientWithGeo(ruleClient) }
                if let ruled = engine.ruleAnswer(host: host, family: family, client: asker!) {
                    cached.append(.answered(.success(ruled.answer)))
                    if extras.isEmpty { extras = Array(repeating: nil, count: hosts.count) }
                    extras[index / families.count] = ruled.extra
                    continue
                }
            }
            let key = engine.cacheKey(host: host, family: family, network: network)
            cached.append(engine.cachedResolution(key).map { .answered(.success($0)) } ?? .miss(key))
        }
        let reply = Reply(hosts: hosts, families: families, extras: extras, render: render)
        if cached.allSatisfy({ $0.outcome != nil }) { return .response(reply.response(cached.map { $0.outcome! })) }
        let client = client()
        // A single pair (one name, one family: most requests) has nothing to gather.
        if pairCount == 1, case .miss(let key) = cached[0] { return Self.resolve(key, client: client, engine: engine, reply: reply) }
        let slot = ReplySlot()
        let gather = OutcomeGather<FamilyOutcome>(count: pairCount) { slot.set(reply.response($0)) }
        for (index, lookup) in cached.enumerated() {
            switch lookup {
            case .answered(let outcome): gather.fill(index, with: outcome)
            case .miss(let key): engine.resolveUncached(key, client: client) { gather.fill(index, with: $0) }
            }
        }
        return slot.result
    }

    /// One name in one family that the cache missed (`key`), through the upstreams, answered by
    /// `render`: the general path's single pair and the fast path's miss
    /// (`HTTPDNSService.answerHit`) both resolve here.
    static func resolveMiss(
        _ key: CacheKey, client: ClientID?, engine: ResolverEngine, render: @escaping @Sendable ([HostResult]) -> HTTPResponse
    ) -> HandlerResult {
        resolve(key, client: client, engine: engine, reply: Reply(hosts: [key.host], families: [key.family], extras: [], render: render))
    }

    private static func resolve(_ key: CacheKey, client: ClientID?, engine: ResolverEngine, reply: Reply) -> HandlerResult {
        let slot = ReplySlot()
        engine.resolveUncached(key, client: client) { slot.set(reply.response([$0])) }
        return slot.result
    }

    /// What turns the outcomes of every pair, in pair order, into the response: a value the
    /// completions capture, not a closure of its own.
    private struct Reply: Sendable {
        let hosts: [HostName]
        let families: [RecordFamily]
        /// A rule's `extra` per host, or empty when no rule answered.
        let extras: [String?]
        let render: @Sendable ([HostResult]) -> HTTPResponse

        func response(_ outcomes: [FamilyOutcome]) -> HTTPResponse {
            var response = render(
                hosts.indices.map { hostIndex in
                    HostResult(
                        host: hosts[hostIndex],
                        families: families.indices.map { (families[$0], outcomes[hostIndex * families.count + $0]) },
                        extra: extras.isEmpty ? nil : extras[hostIndex])
                })
            response.source = AnswerSource.combined(outcomes)
            return response
        }
    }

    /// A pair as the cache step leaves it: answered (by the cache, a rule or the `domains`
    /// decision), or a miss with the key it was looked up under, which the upstream step reuses.
    private enum Lookup {
        case answered(FamilyOutcome)
        case miss(CacheKey)

        var outcome: FamilyOutcome? {
            if case .answered(let outcome) = self { outcome } else { nil }
        }
    }

    /// `ruleClient()` with what the geo and ASN databases say of its address.
    func ruleClientWithGeo(_ ruleClient: () -> RuleClient) -> RuleClient {
        var client = ruleClient()
        if let geo, let address = client.address { client.geo = geo.record(for: address) }
        return client
    }

    /// The `sdns-NAME` arguments of a request, by NAME: what `rules` conditions on `params` read.
    static func ruleParams(_ query: QueryArguments) -> [String: String] {
        var params: [String: String] = [:]
        for (name, value) in query.pairs where name.hasPrefix("sdns-") { params[String(name.dropFirst(5))] = value }
        return params
    }
}
