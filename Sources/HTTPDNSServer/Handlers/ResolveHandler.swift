import HTTPDNSCore

extension HTTPDNSService {
    /// The parsed `host`, `type` and `short` parameters shared by resolve and cache lookups.
    struct HostQuery {
        var hosts: [HostName]
        var type: QueryType
        /// The `short` parameter; nil when absent (the account's `shortEnable` decides).
        var short: Bool?
        var batch: Bool
    }

    func parseHostQuery(_ request: HTTPRequest, maxHosts: Int) -> Result<HostQuery, APIError> {
        guard let hostParameter = request.query["host"], !hostParameter.isEmpty else {
            return .failure(APIError(.missingArgument, "the 'host' parameter is required"))
        }
        let names = hostParameter.split(separator: ",", omittingEmptySubsequences: false)
        guard names.count <= maxHosts else {
            return .failure(APIError(.tooManyHosts, "at most \(maxHosts) hosts per request, got \(names.count)"))
        }
        var hosts: [HostName] = []
        hosts.reserveCapacity(names.count)
        for name in names {
            guard let host = HostName(name) else {
                return .failure(APIError(.invalidHost, "'\(name)' is not a valid host name (RFC 1035; IDN must be punycode)"))
            }
            hosts.append(host)
        }
        var type = QueryType.auto
        if let text = request.query["type"] {
            guard let parsed = QueryType(parameter: text) else {
                return .failure(APIError(.invalidParameter, "type must be A, AAAA, auto or both, got '\(text)'"))
            }
            type = parsed
        }
        if let clientIP = request.query["client_ip"], IPAddress(clientIP) == nil {
            return .failure(APIError(.invalidParameter, "client_ip '\(clientIP)' is not an IP address"))
        }
        var short: Bool?
        if let text = request.query["short"] {
            switch text {
            case "1", "true": short = true
            case "0", "false": short = false
            default: return .failure(APIError(.invalidParameter, "short must be 1, 0, true or false, got '\(text)'"))
            }
        }
        return .success(HostQuery(hosts: hosts, type: type, short: short, batch: names.count > 1))
    }

    /// `GET /v1/{account}/resolve`: every (host, family) through the engine; answered at once when
    /// the cache has everything, else deferred until the last upstream answer is in.
    func resolve(_ request: HTTPRequest, engine: ResolverEngine) -> HandlerResult {
        let query: HostQuery
        switch parseHostQuery(request, maxHosts: limits.maxHostsPerResolve) {
        case .success(let parsed): query = parsed
        case .failure(let error): return .response(error.response)
        }
        let config = engine.config
        let families = query.type.families(ipv6Enabled: config.ipv6Enable)
        let short = query.short ?? config.shortEnable
        let pairs = query.hosts.flatMap { host in families.map { (host, $0) } }
        let render: @Sendable ([FamilyOutcome]) -> HTTPResponse = { outcomes in
            let results = query.hosts.indices.map { hostIndex in
                HostResult(host: query.hosts[hostIndex], families: families.indices.map {
                    (families[$0], outcomes[hostIndex * families.count + $0])
                })
            }
            return AnswerRendering.response(results, batch: query.batch, short: short)
        }
        let slot = ReplySlot()
        let gather = OutcomeGather<FamilyOutcome>(count: pairs.count) { slot.set(render($0)) }
        let network = clientNetwork(of: request)
        for (index, (host, family)) in pairs.enumerated() {
            if let outcome = engine.resolve(host: host, family: family, network: network, completion: { gather.fill(index, with: $0) }) {
                gather.fill(index, with: outcome)
            }
        }
        return slot.result
    }

    /// The client network of `request` (`198.51.100.0/24`, `2001:db8:1200::/56`, `""` when no
    /// address is known): from `client_ip`, else from `X-Forwarded-For` when the peer is one of
    /// `limits.trustedProxies`, else from the peer (`ClientNetwork.select` has the rules). The
    /// engine uses it only for accounts with `ispEnable`.
    public func clientNetwork(of request: HTTPRequest) -> String {
        ClientNetwork.select(
            clientIP: request.query["client_ip"], forwardedFor: request.forwardedFor, peer: request.peer,
            trustedProxies: limits.trustedProxies)
    }
}
