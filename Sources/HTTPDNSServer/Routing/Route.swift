import HTTPDNSCore

/// One row of the route table: a method on a path pattern, the listener(s) it is served on, who
/// may call it, and its handler.
struct Route: Sendable {
    /// One segment of a path pattern.
    enum Segment: Sendable, Equatable {
        case literal(String)
        /// `{account}` of the tenant API: must name an existing account (else 404 UnknownAccount).
        case account
        /// `{id}` of the admin API: any text (the handler checks it).
        case id
    }

    /// Which listener serves the route when an operations listener exists
    /// (`Limits.separateOpsListener`); without one, every route is served on the main listener.
    enum Surface: Sendable {
        /// The probes: both listeners.
        case both
        /// The tenant API.
        case main
        /// `/metrics` and the admin API.
        case ops

        func serves(_ listener: Listener, separate: Bool) -> Bool {
            guard separate else { return true }
            switch self {
            case .both: return true
            case .main: return listener == .main
            case .ops: return listener == .ops
            }
        }
    }

    /// Who may call the route.
    enum Access: Sendable, Equatable {
        /// Anyone (probes, `/metrics`).
        case anyone
        /// The admin bearer token.
        case admin
        /// A client of the account: a key of at least this role when the request is signed or the
        /// account requires signatures (see `ClientAuthenticator`).
        case client(ClientKey.Role)
        /// `resolve` when the request has this argument, else `manage` (`GET /cache?host=` looks
        /// one host up; without `host` it lists the whole cache).
        case clientResolveWithArgument(String)
        /// A resolve-role client key, proven by the EMAS signature (`EMASSignature`: `t` and `s`
        /// over the host list) instead of signature v1, whether or not the account requires
        /// signatures.
        case emasSigned
        /// A resolve-role client key, proven by the Alibaba DoH JSON signature (`uid`, `ak`, `ts`,
        /// `key`; `DoHJSONSignature`) when the request carries one or the account requires
        /// signatures.
        case dohJSON

        /// The role a client request needs; nil for routes that are not the tenant API.
        /// `hasArgument` tells whether the request has a query argument of that name (asked only
        /// for `clientResolveWithArgument`).
        func role(hasArgument: (String) -> Bool) -> ClientKey.Role? {
            switch self {
            case .anyone, .admin: nil
            case .client(let role): role
            case .emasSigned, .dohJSON: .resolve
            // An encrypted request (`enc`) is authorised again once opened, on its real arguments.
            case .clientResolveWithArgument(let name):
                hasArgument(name) || hasArgument(RequestOpening.argument) ? .resolve : .manage
            }
        }

        /// The role `request` needs.
        func role(for request: HTTPRequest) -> ClientKey.Role? {
            role { request.query[$0] != nil }
        }
    }

    /// What a handler is given: the request (after authentication), the account's engine for
    /// `{account}` routes, the `{id}` segment for admin routes, and who made the request.
    struct Match {
        var request: HTTPRequest
        /// The request as received when `request` is what it opened (an encrypted request): its
        /// signature is outside `enc`. Nil when the two are one. Boxed: a match moves from step
        /// to step, and a second request inline would double what each move copies.
        var received: Received?
        var engine: ResolverEngine?
        var id: String?
        var authentication: Authentication = .anonymous
        /// Set when the request was encrypted: its answer is sealed with it.
        var encryption: EncryptedExchange?
        /// An admin caller of a tenant route (`HTTPDNSService.adminCheck` passed): no client key
        /// or rate limit applies.
        var admin = false
    }

    /// A request as received, kept beside the one it opened into (`Match.received`).
    final class Received: Sendable {
        let request: HTTPRequest
        init(_ request: HTTPRequest) { self.request = request }
    }

    /// What runs a request the pipeline let through.
    enum Handler: Sendable {
        /// A route of the service: probes, `/metrics`, the admin API, EMAS `/ss`.
        case service(@Sendable (RouteHandlers, Match) throws(APIError) -> HandlerResult)
        /// A route of one account: run with the account's engine, which every request that gets
        /// this far has (a missing account is refused before, `HTTPDNSService.route`).
        case tenant(@Sendable (RouteHandlers, Match, ResolverEngine) throws(APIError) -> HandlerResult)
    }

    /// Runs the handler on `match`. An error it throws reaches the client here, written in the
    /// route's wire format (`WireFormat.response`): the one place a handler's refusal is mapped.
    func run(_ handlers: RouteHandlers, _ match: Match) -> HandlerResult {
        do throws(APIError) {
            switch handler {
            case .service(let handler): return try handler(handlers, match)
            case .tenant(let handler):
                guard let engine = match.engine else { throw APIError(.unknownAccount, "no such account") }
                return try handler(handlers, match, engine)
            }
        } catch {
            return .response(format.response(error))
        }
    }

    let method: String
    /// The path pattern as written (`/v1/{account}/resolve`): the `endpoint` label of `/metrics`.
    let path: String
    let pattern: [Segment]
    /// The index of the `{account}` segment, if the pattern has one.
    let accountIndex: Int?
    /// The index of the `{id}` segment, if the pattern has one.
    let idIndex: Int?
    /// The position of the route's path among the table's endpoints (`RouteTable.endpoints`),
    /// and, for a route with an account, its position among those (`RouteTable.tenantRoutes`):
    /// how `/metrics` numbers its counters and histograms. Set by `RouteTable`.
    var endpoint = 0
    var tenantIndex: Int?
    let surface: Surface
    let access: Access
    /// The wire API the route belongs to: how the pipeline's refusals are written.
    let format: WireFormat
    /// For a path without `{account}`: the query argument naming the account (the `default`
    /// account when absent), e.g. `uid` of the DoH JSON API.
    let accountArgument: String?
    /// For a path without `{account}`: the account every request is for (RFC 8484's
    /// `/dns-query` serves `default`).
    let fixedAccount: String?
    /// When set, the row serves only requests it accepts; another row of the same path and
    /// method serves the rest (`/dns-query` by `Accept`).
    let condition: Condition?
    /// How a cached hit of this row is read from the borrowed request head (`fastResponse`);
    /// nil for rows whose requests always take the general path.
    let hit: HitReader?
    /// The query arguments the route reads, any other refused; nil: not checked (`RouteArguments`).
    let arguments: RouteArguments.Allowed?
    let handler: Handler

    /// A route of one account: its handler is given the account's engine.
    init(
        _ method: String, _ path: String, _ surface: Surface, _ access: Access, format: WireFormat = .v1,
        accountArgument: String? = nil, account fixedAccount: String? = nil, when condition: Condition? = nil,
        hit: HitReader.Kind? = nil, _ handler: @escaping @Sendable (RouteHandlers, Match, ResolverEngine) throws(APIError) -> HandlerResult
    ) {
        self.init(
            method, path, surface, access, format: format, accountArgument: accountArgument, account: fixedAccount, when: condition,
            hit: hit, handler: .tenant(handler))
    }

    /// A route of the service (no account's engine).
    init(
        _ method: String, _ path: String, _ surface: Surface, _ access: Access, format: WireFormat = .v1,
        _ handler: @escaping @Sendable (RouteHandlers, Match) throws(APIError) -> HandlerResult
    ) {
        self.init(
            method, path, surface, access, format: format, accountArgument: nil, account: nil, when: nil, hit: nil,
            handler: .service(handler))
    }

    private init(
        _ method: String, _ path: String, _ surface: Surface, _ access: Access, format: WireFormat, accountArgument: String?,
        account fixedAccount: String?, when condition: Condition?, hit: HitReader.Kind?, handler: Handler
    ) {
        precondition(hit == nil || method == "GET", "only GET rows have a hit reader")
        self.hit = hit.map(HitReader.init)
        self.format = format
        self.accountArgument = accountArgument
        self.fixedAccount = fixedAccount
        self.condition = condition
        self.method = method
        self.path = path
        self.arguments = RouteArguments.table["\(method) \(path)"]
        self.pattern = path.split(separator: "/").map { segment in
            switch segment {
            case "{account}": .account
            case "{id}": .id
            default: .literal(String(segment))
            }
        }
        self.accountIndex = pattern.firstIndex(of: .account)
        self.idIndex = pattern.firstIndex(of: .id)
        self.surface = surface
        self.access = access
        self.handler = handler
        if case .tenant = handler {
            precondition(
                accountIndex != nil || accountArgument != nil || fixedAccount != nil, "a tenant handler on \(path), which names no account")
        }
    }

    /// Whether a signed request to the route changes state, and so is accepted once: the
    /// `POST`s, `PUT`s and `DELETE`s that need a `manage` key. RFC 8484's `POST` carries a query (its
    /// signature covers the DNS message): served again, it only answers again, as a `GET` does.
    var isSignedChange: Bool {
        access == .client(.manage) && (method == "POST" || method == "PUT" || method == "DELETE")
    }

    /// Whether this row serves `request` (its method aside): always, unless it has a `condition`.
    ///
    /// Both this and `account(of:)` take the table's row by its address: a method called on
    /// `UnsafePointer.pointee` would first copy the whole route (every string, array and closure).
    static func accepts(_ row: UnsafePointer<Route>, _ request: HTTPRequest) -> Bool {
        guard let condition = row.pointee.condition else { return true }
        var accept = request.accept
        return accept?.withUTF8 { condition.accepts(accept: UnsafeRawBufferPointer($0)) } ?? condition.accepts(accept: nil)
    }

    /// Whether this row serves a request whose `Accept` header is `accept` (its method aside).
    func accepts(accept: UnsafeRawBufferPointer?) -> Bool { condition?.accepts(accept: accept) ?? true }

    /// What tells two rows of one path and method apart.
    enum Condition: Sendable {
        /// `Accept` lists `application/dns-json` (`DoHJSONHandler.acceptsDNSJSON`).
        case acceptsDNSJSON

        func accepts(accept: UnsafeRawBufferPointer?) -> Bool {
            switch self {
            case .acceptsDNSJSON: accept.map(DoHJSONHandler.acceptsDNSJSON) ?? false
            }
        }
    }

    /// The account a request to this route names: its `{account}` segment, its `fixedAccount`,
    /// or its `accountArgument` (`default` when the request has none); nil for routes without
    /// an account.
    static func account(of row: UnsafePointer<Route>, _ segments: PathSegments, _ request: HTTPRequest) -> String? {
        if let index = row.pointee.accountIndex { return segments.text(index, of: request.path) }
        if let fixedAccount = row.pointee.fixedAccount { return fixedAccount }
        return row.pointee.accountArgument.map { request.query[$0] ?? "default" }
    }

}
