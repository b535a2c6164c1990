import HTTPDNSCore

/// `GET /v1/{account}/resolve`, the API v1 lookup, and its hit reader.
struct ResolveHandler: Sendable {
    /// The most hosts one request may name (`maxHostsPerResolve`).
    let maxHosts: Int
    let clients: ClientRules
    let lookups: Lookups

    /// The parsed `host`, `type` and `short` parameters shared by resolve and cache lookups.
    struct HostQuery {
        var hosts: [HostName]
        var type: QueryType
        /// The `short` parameter; nil when absent (the account's `shortEnable` decides).
        var short: Bool?
        var batch: Bool

        init(hosts: [HostName], options: QueryOptions, batch: Bool) {
            self.hosts = hosts
            self.type = options.type
            self.short = options.short
            self.batch = batch
        }
    }

    /// The `type` and `short` parameters (and a checked `client_ip`).
    struct QueryOptions {
        var type: QueryType
        var short: Bool?
    }

    static func parseHostQuery(_ request: HTTPRequest, maxHosts: Int) -> Result<HostQuery, APIError> {
        guard let hostParameter = request.query["host"], !hostParameter.isEmpty else {
            return .failure(APIError(.missingArgument, "the 'host' parameter is required"))
        }
        // One host (the common case): no split, and a canonical name is not even copied. A comma
        // is never valid in a name, so a batch always fails this test first.
        if let host = HostName(hostParameter) { return hostQuery([host], batch: false, request) }
        if !hostParameter.utf8.contains(UInt8(ascii: ",")) {
            return .failure(APIError(.invalidHost, "'\(hostParameter)' is not a valid host name (RFC 1035; IDN must be punycode)"))
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
        return hostQuery(hosts, batch: names.count > 1, request)
    }

    private static func hostQuery(_ hosts: [HostName], batch: Bool, _ request: HTTPRequest) -> Result<HostQuery, APIError> {
        parseOptions(request).map { HostQuery(hosts: hosts, options: $0, batch: batch) }
    }

    /// The `type`, `client_ip` and `short` parameters of a host query.
    private static func parseOptions(_ request: HTTPRequest) -> Result<QueryOptions, APIError> {
        Self.parseOptions(type: request.query["type"], clientIP: request.query["client_ip"], short: request.query["short"])
    }

    /// The same from the parameters' values (nil when absent).
    static func parseOptions(type typeText: String?, clientIP: String?, short shortText: String?) -> Result<QueryOptions, APIError> {
        var type = QueryType.auto
        if let text = typeText {
            guard let parsed = QueryType(parameter: text) else {
                return .failure(APIError(.invalidParameter, "type must be A, AAAA, auto or both, got '\(text)'"))
            }
            type = parsed
        }
        if let clientIP, IPAddress(clientIP) == nil {
            return .failure(APIError(.invalidParameter, "client_ip '\(clientIP)' is not an IP address"))
        }
        var short: Bool?
        if let text = shortText {
            switch text {
            case "1", "true": short = true
            case "0", "false": short = false
            default: return .failure(APIError(.invalidParameter, "short must be 1, 0, true or false, got '\(text)'"))
            }
        }
        return .success(QueryOptions(type: type, short: short))
    }

    /// `GET /v1/{account}/resolve`: every (host, family) through the engine (`Lookups.lookUp`). A single
    /// cached name never comes here: the pipeline's hit step answers it (`hit`).
    func resolve(_ request: HTTPRequest, engine: ResolverEngine) throws(APIError) -> HandlerResult {
        let options = engine.lookupOptions
        let network = options.ispEnable ? clients.network(of: request) : ""
        let query = try Self.parseHostQuery(request, maxHosts: maxHosts).get()
        let short = query.short ?? options.shortEnable
        let families = query.type.families(ipv6Enabled: options.ipv6Enable)
        let clients = self.clients
        return lookups.lookUp(
            query.hosts, families, engine: engine, network: network, from: request,
            clientAddress: {
                clients.selectAddress(clientIP: request.query["client_ip"], forwardedFor: request.forwardedFor, peer: request.peerAddress)
            }
        ) { results in
            AnswerRendering.response(results, batch: query.batch, short: short)
        }
    }

    /// The hit reader of `GET /v1/{account}/resolve` (`HitReader`): one host and one
    /// family (for `ispEnable`, of the network `ClientRules.network` picks), written by
    /// `AnswerRendering.fastSingle`. Nil for anything the general path must
    /// answer: an invalid parameter, an argument the route does not read (refused there), an
    /// encrypted request (`enc`, opened or refused by the general path only). A miss is written
    /// by `AnswerRendering.response`, as `resolve` writes it.
    func hit<Head: RequestHead>(_ head: Head, _ request: HitRequest, _ service: HTTPDNSService) -> FastResult? {
        typealias Name = HitReader.V1
        let arguments = request.arguments, options = request.options
        // The host's bytes are checked by the lookup (the cache holds valid names only) and `HostName`.
        guard arguments.others == 0, arguments[Name.enc] == nil, let hostText = arguments[Name.host],
            case .success(let parsed) = Self.parseOptions(
                type: arguments[Name.type].map(HTTPDNSService.string), clientIP: arguments[Name.clientIP].map(HTTPDNSService.string),
                short: arguments[Name.short].map(HTTPDNSService.string)),
            let family = parsed.type.singleFamily(ipv6Enabled: options.ipv6Enable)
        else { return nil }
        let short = parsed.short ?? options.shortEnable
        let network = options.ispEnable ? clients.network(head, clientIP: arguments[Name.clientIP]) : ""
        return service.answerHit(
            head, request, host: hostText, family: family, network: network, needsAdmit: options.hasClientKeys || options.hasAESKey,
            typeAsked: { HTTPDNSService.typeName(arguments[Name.type].map(HTTPDNSService.string) ?? "auto") },
            render: { { AnswerRendering.response($0, batch: false, short: short) } }
        ) { host, answer in
            AnswerRendering.fastSingle(host: host, family: family, answer: answer, short: short)
        }
    }
}
