import HTTPDNSCore
import HTTPDNSWire

/// The query log's side of the pipeline: which lookups are logged and what an entry holds.
extension HTTPDNSService {
    /// What one logged lookup asked and got, as both paths know it.
    struct LoggedLookup {
        /// The general path's name (the fast path gives its bytes to `logLookup`).
        var host: String
        var type: String
        var client: PeerAddress?
        var source: AnswerSource?
        var status: Int
        /// The DNS response code of an RFC 8484 answer, nil otherwise.
        var rcode: UInt8?
        var requestID: String?
    }

    /// Lets `GET /v1/{account}/querylog` read the entries the store keeps (`QueryLogStore`).
    public func setQueryLogReader(_ reader: any QueryLogReading) {
        state.setQueryLogReader(reader)
    }

    /// Logs one lookup of `engine`'s account through `route`, when its `sampleRate` picks it:
    /// the one point both paths log at, beside their duration (`recordDuration`). Callers ask
    /// only when `LookupOptions.logsQueries`, so an account without the log pays one flag.
    /// The entry goes to the bounded queue (`QueryLogQueue.offer`), never waiting for the store.
    /// The queue copies the record's bytes (`QueryLogRecord`): the name from `host` (the fast
    /// path's request bytes) or `lookup.host`; the client's address is masked by the writer.
    func logLookup(
        _ lookup: @autoclosure () -> LoggedLookup, host: UnsafeRawBufferPointer? = nil, engine: ResolverEngine, format: WireFormat,
        started: UInt64
    ) {
        let settings = engine.queryLogSettings
        guard settings.enabled, queryLog.sampled(rate: settings.sampleRate) else { return }
        let lookup = lookup()
        let elapsed = started == 0 ? 0 : Int((MonotonicClock.nanoseconds() &- started) / 1_000)
        let now = SystemClock().now()
        let record = QueryLogRecord(
            time: now, expires: now + Double(settings.retention), durationMicroseconds: elapsed, status: lookup.status,
            client: lookup.client?.ipAddress, clientPrefixV4: settings.clientPrefixV4, clientPrefixV6: settings.clientPrefixV6)
        let texts = QueryLogRecord.Texts(
            account: engine.accountID, type: lookup.type, format: format.rawValue, source: Self.sourceName(lookup),
            rcode: lookup.rcode.map(DNSTypeNames.rcodeName) ?? "", requestID: lookup.requestID ?? "")
        if let host {
            queryLog.offer(record, host: host, texts: texts)
        } else {
            var name = lookup.host
            _ = name.withUTF8 { queryLog.offer(record, host: UnsafeRawBufferPointer($0), texts: texts) }
        }
    }

    /// What answered, or why nothing did: the answer's source; else `refused` (403, or a
    /// REFUSED DNS answer), `limited` (429), `invalid` (another 4xx, FORMERR), `failed`.
    static func sourceName(_ lookup: LoggedLookup) -> String {
        if let source = lookup.source { return source.rawValue }
        switch (lookup.status, lookup.rcode) {
        case (403, _), (_, 5): return "refused"
        case (429, _): return "limited"
        case (400..<500, _), (_, 1): return "invalid"
        case (200..<300, _): return "answered"
        default: return "failed"
        }
    }

    /// Whether a route's requests are name lookups the query log records: every format's
    /// resolve routes (those with a hit reader, EMAS batches, RFC 8484 POSTs).
    static func logsLookups(_ route: Route) -> Bool {
        route.hit != nil || route.format == .rfc8484 || (route.format == .emas && route.path.hasSuffix("resolve"))
    }

    /// The general path's lookup: the question read from the request's arguments (or, for
    /// RFC 8484, its DNS message), the client by the trusted-proxy rule, the response's parts.
    func generalLookup(_ request: HTTPRequest, _ route: Route, _ response: HTTPResponse) -> LoggedLookup {
        var host = "", type = ""
        switch route.format {
        case .v1: (host, type) = (request.query["host"] ?? "", Self.typeName(request.query["type"] ?? "auto"))
        case .emas: (host, type) = (request.query["host"] ?? "", Self.typeName(request.query["query"] ?? "4"))
        case .json: (host, type) = (request.query["name"] ?? "", (request.query["type"] ?? "A").uppercased())
        case .rfc8484:
            if case .success(let bytes) = RFC8484Handler.dnsMessageBytes(request), let query = try? DNSQueryMessage.parse(bytes) {
                (host, type) = (query.name, DNSTypeNames.name(query.type))
            }
        }
        let client = request.peerAddress.map { clients.peer($0, forwardedFor: { request.forwardedFor }) }
        return LoggedLookup(
            host: String(host.prefix(1024)), type: String(type.prefix(32)), client: client, source: response.source,
            status: response.status, rcode: Self.responseCode(response, route), requestID: request.requestID)
    }

    /// The DNS response code of `route`'s response when it is an RFC 8484 DNS message, else nil.
    static func responseCode(_ response: HTTPResponse, _ route: Route) -> UInt8? {
        route.format == .rfc8484 && response.contentType == RFC8484Handler.dnsMessageType && response.body.count >= 12
            ? response.body[3] & 0x0F : nil
    }

    /// `A`, `AAAA`, `auto`, `both` for the v1 and EMAS `type` arguments; anything else as given.
    static func typeName(_ text: String) -> String {
        switch QueryType(parameter: text) {
        case .a: "A"
        case .aaaa: "AAAA"
        case .auto: "auto"
        case .both: "A,AAAA"
        case nil: text
        }
    }
}
