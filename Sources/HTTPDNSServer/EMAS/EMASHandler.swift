import HTTPDNSCore

/// The EMAS HTTPDNS API (`docs/emas.md`) over the same engines, caches and statistics as API v1:
/// its lookups, their hit reader, and `/ss`.
struct EMASHandler: Sendable {
    let clients: ClientRules
    let lookups: Lookups
    /// What `GET /{account}/ss` answers (`ServiceConfig.effectiveAdvertisedAddresses`).
    let advertisedAddresses: [String]

    /// The most hosts one `/resolve` or `/sign_resolve` may ask (the EMAS API's limit).
    static let maxHosts = 5

    /// `GET /{account}/d`, `/sign_d` (`batch` false: one host) and `/resolve`, `/sign_resolve`
    /// (a comma-separated list). Arguments: `host`, `query` (`4`, `6`, `4,6` in any order; absent
    /// means 4), `ip` (the client's address: picks the per-network cache under `ispEnable` and is
    /// echoed as `client_ip`; else the peer, after the trusted-proxy rule). Others are ignored.
    /// Cache hits of `/d` and `/sign_d` are answered by `hit` with the same writer.
    func resolve(_ request: HTTPRequest, engine: ResolverEngine, batch: Bool) throws(APIError) -> HandlerResult {
        guard let hostText = request.query["host"], !hostText.isEmpty else {
            throw APIError(.missingArgument, "the 'host' argument is required")
        }
        let names = batch ? hostText.split(separator: ",", omittingEmptySubsequences: true) : [Substring(hostText)]
        guard names.count <= Self.maxHosts else {
            throw APIError(.tooManyHosts, "at most \(Self.maxHosts) hosts per request, got \(names.count)")
        }
        var hosts: [HostName] = []
        for name in names {
            guard let host = HostName(name) else {
                throw APIError(.invalidHost, "'\(name)' is not a valid host name (RFC 1035; IDN must be punycode)")
            }
            hosts.append(host)
        }
        guard !hosts.isEmpty else { throw APIError(.missingArgument, "the 'host' argument names no host") }
        let families = try Self.families(request.query["query"]).get()
        let (clientIP, network) = client(
            ip: request.query["ip"], forwardedFor: request.forwardedFor, peer: request.peerAddress, options: engine.lookupOptions)
        return lookups.lookUp(
            hosts, families, engine: engine, network: network, from: request, clientAddress: { IPAddress(clientIP) }
        ) { results in
            batch ? EMASRendering.batch(results) : EMASRendering.single(results[0], clientIP: clientIP)
        }
    }

    /// The client's address an EMAS request names, as the `client_ip` it echoes (`""` when none
    /// is known), and its network when the account has `ispEnable` (else `""`): `ip` when it is an
    /// address, else the peer (or, from a trusted proxy, the address `X-Forwarded-For` names).
    func client(
        ip: String?, forwardedFor: String?, peer: PeerAddress?, options: ResolverEngine.LookupOptions
    ) -> (clientIP: String, network: String) {
        let address = clients.selectAddress(clientIP: ip, forwardedFor: forwardedFor, peer: peer)
        return (address.map(\.description) ?? "", options.ispEnable ? address.map(ClientNetwork.network(of:)) ?? "" : "")
    }

    /// The hit reader of `GET /{account}/d` and `/sign_d` (`HitReader`): one host, one
    /// family (for `ispEnable`, of the client's network), written by `EMASRendering.fastSingle`
    /// (the general path's writer), the client chosen by `client` as there. Nil for anything
    /// else: both families, an invalid argument, `enc`. Other arguments are ignored, as on the
    /// general path. `sign_d` always runs the general signature check. A miss is written by
    /// `EMASRendering.single`, as `resolve` writes it.
    func hit<Head: RequestHead>(_ head: Head, _ request: HitRequest, _ service: HTTPDNSService) -> FastResult? {
        typealias Name = HitReader.EMAS
        let arguments = request.arguments, options = request.options
        guard arguments[Name.enc] == nil, let hostText = arguments[Name.host], hostText.count > 0,
            case .success(let families) = Self.families(arguments[Name.query].map(HTTPDNSService.string)), families.count == 1
        else {
            return nil
        }
        let (clientIP, network) = client(
            ip: arguments[Name.ip].map(HTTPDNSService.string), forwardedFor: clients.forwardedFor(head), peer: head.peerAddress,
            options: options)
        let family = families[0]
        let needsAdmit = request.route.pointee.access == .emasSigned || options.hasClientKeys || options.hasAESKey
        return service.answerHit(
            head, request, host: hostText, family: family, network: network, needsAdmit: needsAdmit,
            typeAsked: { HTTPDNSService.typeName(arguments[Name.query].map(HTTPDNSService.string) ?? "4") },
            render: { { EMASRendering.single($0[0], clientIP: clientIP) } }
        ) { host, answer in
            EMASRendering.fastSingle(host: host, family: family, answer: answer, clientIP: clientIP)
        }
    }

    /// The families of an EMAS `query` argument: `4` (also when absent or empty), `6`, or both
    /// (`4,6`, `6,4`; `%2C` arrives decoded). Anything else, a family given twice or an empty
    /// part included (`4,6,4`, `4,4`, `4,`), is refused.
    static func families(_ query: String?) -> Result<[RecordFamily], APIError> {
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
    func serviceAddresses() -> HTTPResponse {
        EMASRendering.serviceAddresses(advertisedAddresses)
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
