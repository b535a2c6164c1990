import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

/// How a route's cached hit is read (`Route.hit`): which format's reader takes it, and the query
/// arguments that reader reads. Built once with the route table. The reader is the one code that
/// answers a single cached name, on the fast path (`fastResponse`, the request where
/// libmicrohttpd keeps it) and in the general pipeline (`cachedHit`, the request it copied).
struct HitReader: Sendable {
    /// Which wire format's question the reader reads (it calls its format's one writer).
    enum Kind: Sendable {
        /// `GET /v1/{account}/resolve` (`ResolveHandler.swift`).
        case v1Resolve
        /// `GET /{account}/d` and `/sign_d` (`EMASHandler.swift`).
        case emas
        /// `GET /resolve` and `GET /dns-query` with `Accept: application/dns-json` (`DoHJSONHandler.swift`).
        case dohJSON
        /// `GET /dns-query?dns=` and `/v1/{account}/dns-query?dns=` (`RFC8484Handler.swift`).
        case rfc8484
    }

    let kind: Kind
    /// What the format reads; the first is the name or message asked for.
    let names: ArgumentNames

    /// The positions of the arguments each kind reads in its `names`.
    enum V1 { static let host = 0, type = 1, clientIP = 2, short = 3, enc = 4 }
    enum EMAS { static let host = 0, query = 1, ip = 2, enc = 3 }
    enum DoHJSON { static let name = 0, type = 1, short = 2, subnet = 3, uid = 4, enc = 5, ak = 6, ts = 7, key = 8 }
    enum RFC8484 { static let dns = 0, enc = 1, clientIP = 2 }

    init(_ kind: Kind) {
        self.kind = kind
        switch kind {
        // v1 reads the signature v1 arguments too, so that anything else is an unknown argument
        // (refused by the general path).
        case .v1Resolve: names = ArgumentNames("host", "type", "client_ip", "short", "enc", "kid", "t", "sign")
        case .emas: names = ArgumentNames("host", "query", "ip", "enc")
        case .dohJSON: names = ArgumentNames("name", "type", "short", "edns_client_subnet", "uid", "enc", "ak", "ts", "key")
        case .rfc8484: names = ArgumentNames("dns", "enc", "client_ip")
        }
    }
}

/// What a format's hit reader is given with the borrowed request head: its route, account,
/// arguments and the account's engine, valid while the head is. Not generic over the
/// head, which is passed beside it: a generic struct's metadata is instantiated at run time, and
/// `HitRequest<ConnectionHead>`'s accessor took four runtime-cache lookups a hit (about 1 300
/// instructions, callgrind).
struct HitRequest {
    /// The route's row (the route table keeps it alive); it has a `hit` reader.
    let route: UnsafePointer<Route>
    let account: UnsafeRawBufferPointer
    let arguments: RequestArguments
    let engine: ResolverEngine
    let options: ResolverEngine.LookupOptions
    /// `MonotonicClock.nanoseconds()` when the fast path began, 0 when neither durations are
    /// recorded nor lookups logged.
    let started: UInt64
    /// The general pipeline runs the reader (`cachedHit`) after its own limits, authentication,
    /// role and encryption steps, and records the duration itself: the reader then only reads,
    /// looks up and writes.
    var admitted = false
    /// A miss is looked up from here (`FastResult.lookup`) rather than left to the general path.
    var startsMisses: Bool
}

extension HTTPDNSService {
    /// The fast path for `HTTPServer`: a cache hit (one name, one family) of a route whose row
    /// has a hit reader (`Route.hit`), found by the route table's one matcher, read from the
    /// borrowed request (no `HTTPRequest`) by the reader `handle`'s hit step runs too. It answers
    /// exactly what `handle` would, or returns nil and leaves the request to `handle`: for
    /// anything else, and any invalid or unusual argument (so the general path writes the
    /// error). For accounts with `ispEnable` each format's reader picks the client network
    /// with the general path's own parts (its format's client address argument, the Client
    /// Subnet of an RFC 8484 query, else the peer after the trusted-proxy rule, `X-Forwarded-For`
    /// included) and looks the hit up under that network. For accounts with client keys or an
    /// `aesSecretKey`, and for signed requests, it runs the general pipeline's own checks on the
    /// borrowed head (`fastPathAdmits`) and answers only what they let through unchanged: a
    /// refused signature or role, an encrypted request (its answer is sealed) and a plain one
    /// refused by `requireEncryption` are left to `handle`, which runs the same steps again and
    /// writes the answer.
    ///
    /// A miss of such a request, once the limits and checks above let it through, is looked up
    /// here too (`FastResult.lookup`), as the general path's single pair is (`Lookups.resolveMiss`),
    /// written by the format's general writer and labelled and timed by `finished`, instead of
    /// leaving the general path to read, route and check the request again; an account that logs
    /// its lookups has it logged when its answer is written (`finish`), as a hit is at once.
    public func fastPath<Head: RequestHead>(_ head: Head) -> FastResult? { fastPath(head, startsMisses: true) }

    /// The same path for hits alone: nil for a miss, with nothing started.
    public func fastResponse<Head: RequestHead>(_ head: Head) -> FastResponse? {
        switch fastPath(head, startsMisses: false) {
        case .answer(let response)?: response
        default: nil
        }
    }

    private func fastPath<Head: RequestHead>(_ head: Head, startsMisses: Bool) -> FastResult? {
        guard head.method.equals("GET"), let (route, pathAccount) = hitRoute(head), let hit = route.pointee.hit,
            let arguments = head.arguments(hit.names)
        else { return nil }
        let timed = recordsRequestDurations
        // The DoH JSON API names its account with `uid` (`default` when absent).
        let account = pathAccount ?? (hit.kind == .dohJSON ? arguments[HitReader.DoHJSON.uid] : nil) ?? Self.defaultAccount
        var result: FastResult?
        registry.withEngine(utf8: account) { engine in
            let options = engine.lookupOptions
            let started = timed || options.logsQueries ? MonotonicClock.nanoseconds() : 0
            result = readHit(
                head,
                HitRequest(
                    route: route, account: account, arguments: arguments, engine: engine, options: options, started: started,
                    startsMisses: startsMisses))
        }
        return result
    }

    /// The row of the route table that serves `head` (a `GET`), when that row has a hit reader,
    /// with the account its path names (nil for routes whose account is an argument or fixed).
    /// Found by the table's one matcher, as the general path finds it; only a path written
    /// canonically (no `//`, no trailing `/`) is taken: others are left to the general path.
    private func hitRoute<Head: RequestHead>(_ head: Head) -> (UnsafePointer<Route>, UnsafeRawBufferPointer?)? {
        let path = head.path
        guard let found = routeMatcher.match(path), found.segments.isCanonical else { return nil }
        // The first GET row that accepts the request, as `route` picks it (a row with a hit
        // reader is a GET row); `Accept` is read only for a row that depends on it.
        for index in found.rows.indices {
            let row = found.rows.baseAddress! + index
            let hasHit = row.pointee.hit != nil
            guard hasHit || row.pointee.method == "GET",
                row.pointee.condition == nil || row.pointee.accepts(accept: head.header("Accept"))
            else { continue }
            guard hasHit else { return nil }
            return (row, row.pointee.accountIndex.map { found.segments.bytes($0, of: path) })
        }
        return nil
    }

    /// The hit of `request` in its format (or the lookup of its miss), or nil.
    private func readHit<Head: RequestHead>(_ head: Head, _ request: HitRequest) -> FastResult? {
        switch request.route.pointee.hit!.kind {
        case .v1Resolve: handlers.resolve.hit(head, request, self)
        case .emas: handlers.emas.hit(head, request, self)
        case .dohJSON: handlers.dohJSON.hit(head, request, self)
        case .rfc8484: handlers.rfc8484.hit(head, request, self)
        }
    }

    /// The general pipeline's hit step, after its limits, authentication, role, encryption and
    /// argument steps let `match` through to `route`'s handler: a route with a hit reader
    /// (`Route.hit`) answers a single cached name with that reader, as the fast path does, run
    /// on the copied request (`HTTPRequest.withHead`). Nil for anything else, which the handler
    /// answers (a batch, both families, a miss, an invalid argument).
    func cachedHit(_ route: Route, _ match: Route.Match) -> HTTPResponse? {
        guard let hit = route.hit, let engine = match.engine else { return nil }
        return match.request.withHead { head -> HTTPResponse? in
            guard let arguments = head.arguments(hit.names) else { return nil }
            return withUnsafePointer(to: route) { row in
                let request = HitRequest(
                    route: row, account: UnsafeRawBufferPointer(start: nil, count: 0), arguments: arguments, engine: engine,
                    options: engine.lookupOptions, started: 0, admitted: true, startsMisses: false)
                guard case .answer(let response)? = readHit(head, request) else { return nil }
                return HTTPResponse(hit: response)
            }
        }
    }

    /// `default`, the account of `/dns-query` and of DoH JSON requests without `uid`, as bytes
    /// that live as long as the program.
    private static var defaultAccount: UnsafeRawBufferPointer {
        let name: StaticString = "default"
        return UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
    }

    /// The steps every format's fast path shares once its reader has the question: the limits
    /// first, then (when `needsAdmit`) authentication, role and encryption as the general path
    /// runs them (a flood of bad signatures costs no HMAC beyond its rate), then the cache, so
    /// that only admitted hits are counted; `write` is the format's writer, given the host (a
    /// valid name in canonical form) and the cached answer. `network`: the client network the
    /// general path would look the name up for (`""` unless the account has `ispEnable`). A
    /// miss, when `request.startsMisses`, is looked up with the writer `render` gives (the
    /// format's general writer; nil leaves the miss to the general path). `typeAsked`: the type
    /// the query log records, as the general path writes it (read only when the account logs
    /// its lookups). Nil, with the rate
    /// token given back, for what the general path must answer. A name the account's `domains`
    /// refuses (checked only when it has a policy) is left to the general path, which writes the
    /// refusal (`Lookups.lookUp`); so is a name one of its `rules` names.
    func answerHit<Head: RequestHead>(
        _ head: Head, _ request: HitRequest, host hostText: UnsafeRawBufferPointer, family: RecordFamily, network: String = "",
        needsAdmit: Bool, typeAsked: () -> String, render: () -> (@Sendable ([HostResult]) -> HTTPResponse)?,
        write: (UnsafeBufferPointer<UInt8>, ResolvedAnswer) -> FastResponse?
    ) -> FastResult? {
        // The request's parts, read once: the switch below would otherwise keep a copy of it.
        let engine = request.engine, options = request.options, route = request.route, account = request.account
        let started = request.started
        if options.hasDomainPolicy && !engine.allows(hostText) { return nil }
        // A name one of the account's `rules` names is answered by the general path (`Lookups`).
        if options.hasRules && engine.hasRule(for: hostText) { return nil }
        if request.admitted {
            guard case .hit(let response) = lookUpHit(hostText, family, network, engine, misses: false, write) else { return nil }
            return .answer(response)
        }
        let limit = limitDecision(peer: { head.peerAddress }, forwardedFor: { head.forwardedFor }, account: account, options: options)
        // A refused client is answered by the general path, which runs the same step and writes the 429.
        if case .refused = limit { return nil }
        if needsAdmit && !fastPathAdmits(head, route: route.pointee, engine: engine) {
            refund(limit, account: account)
            return nil
        }
        switch lookUpHit(hostText, family, network, engine, misses: request.startsMisses, write) {
        case .hit(var response):
            response.endpoint = route.pointee.endpoint
            response.account = account
            if started != 0 && recordsRequestDurations {
                recordDuration(slot: RequestDurations.slot(route.pointee, source: response.source), engine: engine, started: started)
            }
            if options.logsQueries {
                var lookup = loggedQuestion(head, host: "", type: typeAsked())
                (lookup.source, lookup.status, lookup.rcode) = (response.source, 200, response.dnsResponseCode)
                logLookup(lookup, host: hostText, engine: engine, format: route.pointee.format, started: started)
            }
            return .answer(response)
        case .miss(let key):
            if let render = render() {
                let lookup = Lookups.resolveMiss(key, client: clients.id(head), engine: engine, render: render)
                var routed = Routed(route: route, timed: route, engine: engine)
                if options.logsQueries { routed.question = loggedQuestion(head, host: Self.string(hostText), type: typeAsked()) }
                return .lookup(finished(lookup, routed, started: started))
            }
            refund(limit, account: account)
            return nil
        case .none:
            refund(limit, account: account)
            return nil
        }
    }

    /// What the query log records of a borrowed request before its answer: the name, the type
    /// asked, the client by the trusted-proxy rule, the request id.
    private func loggedQuestion<Head: RequestHead>(_ head: Head, host: String, type: String) -> LoggedLookup {
        let client = head.peerAddress.map { clients.peer($0, forwardedFor: { head.forwardedFor }) }
        return LoggedLookup(
            host: host, type: String(type.prefix(32)), client: client, source: nil, status: 0, rcode: nil, requestID: head.requestID)
    }

    /// Whether the general pipeline's steps after the limits (`admit`: signature, role,
    /// encryption) let `head`'s request through to `route`'s handler as it is. False for any
    /// refusal and for what needs its answer sealed; `handle` then runs the same steps again and
    /// writes the answer, so errors are written in one place only. Each check is the general
    /// path's own, run on the borrowed head (nothing copied): the signature of the route's
    /// format and the role (`authenticateTenant`), then, for an account with an `aesSecretKey`,
    /// the encryption step's decision on a request without `enc` (`RequestOpening.plainRefusal`;
    /// a request with `enc` never comes here). The arguments were checked by
    /// `RequestHead.arguments`, but for the first name's value: the name each reader looks up,
    /// which the cache never holds with a control character or invalid UTF-8, so a request the
    /// general path refuses for it is never answered here either.
    private func fastPathAdmits<Head: RequestHead>(_ head: Head, route: Route, engine: ResolverEngine) -> Bool {
        let needed = route.access.role { name in
            head.withSignedParts { parts in parts.arguments.contains { $0.name.elementsEqual(name.utf8) } }
        }
        guard let role = needed else { return false }
        guard case .success = authenticateTenant(head, access: route.access, role: role, engine: engine) else { return false }
        guard engine.lookupOptions.hasAESKey else { return true }
        return engine.withConfig { RequestOpening.plainRefusal(account: engine.accountID, requireEncryption: $0.requireEncryption) } == nil
    }

    /// What the cache lookup of the fast path found: a hit, written; a miss of a valid name
    /// (looked for only when asked), with its key; or nothing the fast path answers.
    private enum HitLookup: ~Copyable {
        case hit(FastResponse)
        case miss(CacheKey)
        case none
    }

    /// The cache lookup of every fast path, and its format's writer. `misses`: a miss of a valid
    /// name comes back with its cache key, for the fast path to look up; else it is `.none`.
    private func lookUpHit(
        _ hostText: UnsafeRawBufferPointer, _ family: RecordFamily, _ network: String, _ engine: ResolverEngine, misses: Bool,
        _ write: (UnsafeBufferPointer<UInt8>, ResolvedAnswer) -> FastResponse?
    ) -> HitLookup {
        // `FastResponse` is not copyable: the closures below hand it out through `response`.
        var response: FastResponse?
        var networkText = network
        let checked: Bool = networkText.withUTF8 { networkBytes in
            // A name in canonical form (the usual case) is looked up and written from the
            // request's bytes, before it is checked: a name the cache has is valid
            // (`BorrowedCacheKey(unchecked:)`).
            guard hostText.count <= HostName.maximumLength else { return false }
            let key = BorrowedCacheKey(unchecked: hostText, family: family, network: UnsafeRawBufferPointer(networkBytes))
            if let answer = engine.cachedResolution(key) {
                response = write(key.host, answer)
                return true
            }
            // Not cached in this form: a canonical name is a miss.
            return HostName.isCanonical(key.host)
        }
        if checked {
            if let response = response.take() { return .hit(response) }
            // Not cached, and `isCanonical` passed above: no second scan of the name.
            guard misses else { return .none }
            let host = HostName(canonical: hostText.assumingMemoryBound(to: UInt8.self))
            return .miss(engine.cacheKey(host: host, family: family, network: network))
        }
        guard let host = HostName(utf8: hostText) else { return .none }
        guard let answer = engine.cachedResolution(host: host, family: family, network: network) else {
            return misses ? .miss(engine.cacheKey(host: host, family: family, network: network)) : .none
        }
        var name = host.value
        name.withUTF8 { response = write($0, answer) }
        guard let response = response.take() else { return .none }
        return .hit(response)
    }

    /// The text of an argument's bytes.
    static func string(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }
}
