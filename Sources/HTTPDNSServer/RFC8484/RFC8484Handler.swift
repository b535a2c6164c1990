import HTTPDNSCore
import HTTPDNSCrypto
import HTTPDNSWire

/// RFC 8484 DNS over HTTPS (`docs/rfc8484.md`) over the same engines, caches and statistics as
/// API v1: `GET ...?dns=BASE64URL` and `POST` with an `application/dns-message` body, at
/// `/dns-query` (the `default` account) and `/v1/{account}/dns-query`: the lookup of a query,
/// the forwarding of other questions, and the hit reader.
struct RFC8484Handler: Sendable {
    let clients: ClientRules
    let lookups: Lookups
    /// Malformed messages and forwarded queries.
    let metrics: DNSMessageMetrics

    /// One DNS query. An A or AAAA question (class IN) for a valid host name goes through the
    /// engine (cache, single-flight, statistics; the query's Client Subnet chooses the network
    /// of an `ispEnable` account); any other question is forwarded to the account's upstreams
    /// and their reply passed on. A message that is not a query is 400 (counted). A question
    /// whose name the account's `domains` refuses is REFUSED, whatever its type, no upstream asked.
    func answer(_ request: HTTPRequest, engine: ResolverEngine) throws(APIError) -> HandlerResult {
        let bytes = try Self.dnsMessageBytes(request).get()
        let query: DNSQueryMessage
        do throws(DNSMessageError) {
            query = try DNSQueryMessage.parse(bytes)
        } catch {
            metrics.malformed.increment()
            throw APIError(.invalidDNSMessage, "the DNS message is not a query this service can read: \(error.message)")
        }
        let clients = self.clients
        return answer(
            query, engine: engine, client: { clients.id(of: request) }, peerNetwork: { clients.network(of: request) },
            peerAddress: {
                clients.selectAddress(clientIP: request.query["client_ip"], forwardedFor: request.forwardedFor, peer: request.peerAddress)
            })
    }

    /// The answer to a parsed query, whatever carried it (RFC 8484 over HTTP, plain DNS over UDP
    /// or TCP): the engine's for an A or AAAA question, the upstreams' for any other, REFUSED for
    /// a name the account's `domains` refuses. The response's body is the DNS message. `client`
    /// is whose share of the upstream budget a miss takes; `peerNetwork` is the client network of
    /// an `ispEnable` account when the query has no Client Subnet, `peerAddress` the client's
    /// address for the account's `rules` in that case (each read only when needed).
    func answer(
        _ query: DNSQueryMessage, engine: ResolverEngine, client: () -> ClientID?, peerNetwork: () -> String,
        peerAddress: () -> IPAddress?
    ) -> HandlerResult {
        guard let (host, family) = Self.engineQuestion(query) else {
            if engine.lookupOptions.hasDomainPolicy && !Self.allows(query.name, engine: engine) {
                return .response(RFC8484Rendering.refused(query))
            }
            return forward(query, engine: engine, client: client())
        }
        let (network, subnetScope) = engine.lookupOptions.ispEnable ? Self.network(query, peerNetwork: peerNetwork) : ("", 0)
        let ruleClient = { RuleClient(address: Self.subnetAddress(query) ?? peerAddress()) }
        return lookups.lookUp([host], [family], engine: engine, network: network, client: client, ruleClient: ruleClient) {
            results in
            RFC8484Rendering.answer(results[0], query: query, subnetScope: subnetScope)
        }
    }

    /// The client network of a query to an account with `ispEnable`, and the scope prefix length
    /// its answer's Client Subnet option carries: the query's Client Subnet (none for a source
    /// prefix of 0 or an address that does not parse, scope 0), else `peerNetwork()` (the
    /// request's `ClientRules.network(of:)`) when the query has no Client Subnet.
    static func network(_ query: some DNSQuery, peerNetwork: () -> String) -> (network: String, scope: UInt8) {
        guard let subnet = query.edns?.clientSubnet else { return (peerNetwork(), 0) }
        guard subnet.sourcePrefixLength > 0,
            let address = subnet.withAddress({ IPAddress(family: subnet.family == 1 ? .a : .aaaa, rawBytes: $0) })
        else {
            return ("", 0)
        }
        return (
            ClientNetwork.network(of: address),
            UInt8(address.family == .a ? ClientNetwork.ipv4PrefixLength : ClientNetwork.ipv6PrefixLength)
        )
    }

    /// The address of a query's Client Subnet (nil without one, or with a source prefix of 0).
    static func subnetAddress(_ query: some DNSQuery) -> IPAddress? {
        guard let subnet = query.edns?.clientSubnet, subnet.sourcePrefixLength > 0 else { return nil }
        return subnet.withAddress { IPAddress(family: subnet.family == 1 ? .a : .aaaa, rawBytes: $0) }
    }

    /// Whether the account's `domains` lets a forwarded question's name be asked.
    private static func allows(_ name: String, engine: ResolverEngine) -> Bool {
        var name = name
        return name.withUTF8 { engine.allows(UnsafeRawBufferPointer($0)) }
    }

    /// The name and family of a question the engine answers (class IN, A or AAAA, a valid host
    /// name); nil for one that is forwarded.
    static func engineQuestion(_ query: DNSQueryMessage) -> (HostName, RecordFamily)? {
        guard let family = engineFamily(query), let host = HostName(query.name) else { return nil }
        return (host, family)
    }

    /// The family of a question of class IN and type A or AAAA, nil for any other.
    private static func engineFamily(_ query: some DNSQuery) -> RecordFamily? {
        guard query.questionClass == 1 else { return nil }
        return switch query.type {
        case 1: .a
        case 28: .aaaa
        default: nil
        }
    }

    /// The hit reader (`HitReader`) of `GET /dns-query?dns=` and `/v1/{account}/dns-query?dns=`:
    /// an A or AAAA question the cache answers, written by `RFC8484Rendering.fastAnswer`, the
    /// general path's writer (for `ispEnable`, the hit of the network and with the Client Subnet
    /// scope `network` gives). The message is decoded into, and read by libknot in, a
    /// buffer on the stack; the name is looked up as libknot writes it (a name that is not
    /// a valid host name is never cached). Nil for anything else: a message that does not parse
    /// (counted by the general path), one longer than `fastMessageCapacity`, a question that is
    /// forwarded, `enc`. A miss is written by `RFC8484Rendering.answer` for the query parsed as
    /// `answer` parses it (from the argument again: libknot may change the bytes it read).
    func hit<Head: RequestHead>(_ head: Head, _ request: HitRequest, _ service: HTTPDNSService) -> FastResult? {
        typealias Name = HitReader.RFC8484
        guard request.arguments[Name.enc] == nil, var text = request.arguments[Name.dns] else { return nil }
        // Padding tolerated, as `dnsMessageBytes` does.
        while text.last == UInt8(ascii: "=") { text = UnsafeRawBufferPointer(rebasing: text.dropLast()) }
        let capacity = Base64URL.decodedCapacity(text.count)
        guard !text.isEmpty, capacity <= Self.fastMessageCapacity else { return nil }
        let options = request.options
        let needsAdmit = options.hasClientKeys || options.hasAESKey
        var response: FastResult?
        withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 8) { buffer in
            guard let count = Base64URL.decode(text, into: buffer) else { return }
            try? DNSQueryMessage.withQuery(parsing: UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])) {
                (query) throws(DNSMessageError) in
                guard let family = Self.engineFamily(query) else { return }
                let (network, scope) =
                    options.ispEnable
                    ? Self.network(query) { clients.network(head, clientIP: request.arguments[Name.clientIP]) } : ("", 0)
                try query.withName { name in
                    response = service.answerHit(
                        head, request, host: name, family: family, network: network, needsAdmit: needsAdmit,
                        typeAsked: { family.typeName },
                        render: {
                            guard case .success(let bytes) = Self.dnsMessageBytes(argument: HTTPDNSService.string(text)),
                                let owned = try? DNSQueryMessage.parse(bytes)
                            else { return nil }
                            return { RFC8484Rendering.answer($0[0], query: owned, subnetScope: scope) }
                        }
                    ) { _, answer in
                        RFC8484Rendering.fastAnswer(answer, query: query, subnetScope: scope)
                    }
                }
            }
        }
        return response
    }

    /// The longest message the fast path decodes (on the stack; a query is far shorter, and
    /// larger temporary allocations cost a check of the stack's bounds each): longer ones are
    /// left to the general path.
    static let fastMessageCapacity = 1024

    /// Forwards `query` through the engine (`ResolverEngine.forward`, on `client`'s share of the
    /// upstream budget): the upstream's reply with the query's ID, or SERVFAIL when no upstream
    /// gave a usable one. The connection is
    /// suspended meanwhile.
    private func forward(_ query: DNSQueryMessage, engine: ResolverEngine, client: ClientID?) -> HandlerResult {
        let metrics = self.metrics
        return .deferred { respond in
            engine.forward(query.bytes, client: client) { result in
                let response: HTTPResponse
                switch result {
                case .success(let reply):
                    response = RFC8484Rendering.forwarded(reply, query: query)
                case .failure(let failure):
                    response = RFC8484Rendering.serverFailure(query)
                    if let suppressed = metrics.forwardFailureLog.admit(engine.accountID, now: engine.now) {
                        let more = suppressed > 0 ? " (\(suppressed) more since the last report)" : ""
                        Log.warning(
                            "RFC 8484: a type \(query.type) question of account '\(Log.escaped(engine.accountID))' could not be forwarded: \(failure.message)\(more)"
                        )
                    }
                }
                if response.status == 200 && RFC8484Rendering.isAnswer(response) {
                    metrics.forwarded.increment()
                } else {
                    metrics.forwardFailures.increment()
                }
                respond(response)
            }
        }
    }

    /// The DNS message of a request: the `dns` argument (base64url; padding tolerated) of a GET,
    /// the body of a POST (`Content-Type: application/dns-message`, else 415).
    static func dnsMessageBytes(_ request: HTTPRequest) -> Result<[UInt8], APIError> {
        if request.method == "POST" {
            let type = request.contentType?.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: " \t").lowercased() }
            guard type == dnsMessageType else {
                return .failure(
                    APIError(
                        .unsupportedMediaType,
                        "a POST to dns-query must have Content-Type: \(dnsMessageType), got '\(request.contentType ?? "")'"))
            }
            guard !request.body.isEmpty else { return .failure(APIError(.missingArgument, "the request body (a DNS message) is empty")) }
            return .success(request.body)
        }
        return dnsMessageBytes(argument: request.query["dns"])
    }

    /// The DNS message of a GET's `dns` argument (base64url; padding tolerated).
    static func dnsMessageBytes(argument text: String?) -> Result<[UInt8], APIError> {
        guard let text, !text.isEmpty else {
            return .failure(APIError(.missingArgument, "the 'dns' argument (a base64url DNS message) is required"))
        }
        var unpadded = Substring(text)
        while unpadded.hasSuffix("=") { unpadded = unpadded.dropLast() }
        guard let bytes = Base64URL.decode(unpadded) else {
            return .failure(APIError(.invalidDNSMessage, "the 'dns' argument is not base64url (RFC 4648 §5)"))
        }
        return .success(bytes)
    }

    /// The media type of RFC 8484 bodies.
    static let dnsMessageType = "application/dns-message"
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var text = self
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return text
    }
}

extension APIError.Code {
    /// RFC 8484: the request's DNS message does not parse, or is not a query (counted in
    /// `httpdns_dns_message_malformed_total`).
    static let invalidDNSMessage = Self("InvalidDNSMessage", status: 400)
    /// RFC 8484: a POST body that is not `application/dns-message`.
    static let unsupportedMediaType = Self("UnsupportedMediaType", status: 415)
}
