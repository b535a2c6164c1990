import HTTPDNSCore
import Synchronization

/// The API v1 of DESIGN.md over the account registry: routes each request to its handler.
/// Handlers never block: cache hits answer at once, misses defer the response.
public final class HTTPDNSService: Sendable {
    public struct Limits: Sendable {
        public var maxHostsPerResolve = 20
        public var maxPreloadHosts = 10_000
        public var preloadConcurrency = 32
        public var maxCacheListLimit = 1000
        /// Peers whose `X-Forwarded-For` is believed when choosing a request's client network.
        public var trustedProxies: [CIDR] = []
        /// An operations listener exists: `/metrics` and the admin API are served there only
        /// (404 on `.main`), and the tenant API is not served on it.
        public var separateOpsListener = false
        /// What `GET /{account}/ss` (EMAS API) answers (`ServiceConfig.effectiveAdvertisedAddresses`).
        public var advertisedAddresses: [String] = []

        /// The service's default client rate (`rateLimit`, `rateBurst`); accounts may override it.
        public var clientRate = ClientRateLimiter.Rate(perSecond: 0, burst: 0)
        /// How the per-client limits tell clients apart (`clientIPv6PrefixLength`).
        public var clientKeying = ClientKeying()
        /// Which accounts `/metrics` on the operations listener shows per account (`metricsAccounts`).
        public var metricsAccounts = MetricsAccounts.all
        /// Whether tenant request durations are recorded (`metricsHistograms`).
        public var requestDurations = true
        /// The geo and ASN databases the `rules` conditions `countries`, `regions`, `asns` read (nil: none).
        public var geo: (any GeoLookup)?

        public init(
            maxPreloadHosts: Int = 10_000, preloadConcurrency: Int = 32, trustedProxies: [CIDR] = [],
            separateOpsListener: Bool = false, advertisedAddresses: [String] = [],
            clientRate: ClientRateLimiter.Rate = .init(perSecond: 0, burst: 0), metricsAccounts: MetricsAccounts = .all,
            requestDurations: Bool = true, clientKeying: ClientKeying = ClientKeying()
        ) {
            self.maxPreloadHosts = maxPreloadHosts
            self.preloadConcurrency = preloadConcurrency
            self.trustedProxies = trustedProxies
            self.separateOpsListener = separateOpsListener
            self.advertisedAddresses = advertisedAddresses
            self.clientRate = clientRate
            self.metricsAccounts = metricsAccounts
            self.requestDurations = requestDurations
            self.clientKeying = clientKeying
        }
    }

    let registry: AccountRegistry
    let accountStore: (any AccountPersistence)?
    let adminToken: String?
    let limits: Limits
    let authenticator: ClientAuthenticator
    /// What is attached after the service is built (readiness, store health, replication, metrics).
    let state: ServiceState
    /// Who a request's client is (trusted proxies, keying), for the limit step and the handlers.
    let clients: ClientRules
    /// The route table's handlers, built once with their dependencies.
    let handlers: RouteHandlers
    /// `limits.requestDurations`, read on every request.
    let recordsRequestDurations: Bool
    /// The route table's matcher, held here so that a request reaches it without a copy of the table.
    let routeMatcher = RouteTable.standard.matcher
    /// Durations of tenant requests to no known account (in the totals only).
    let unknownAccountDurations: DurationHistograms
    /// Which accounts had lookups since the last scrape (`metricsAccounts: active`).
    let metricsActivity: MetricsActivity
    /// Client buckets of the limit step (`limitDecision`).
    let rateLimiter: ClientRateLimiter
    /// Requests to no known account refused by the client rate limit.
    let unknownAccountRefusals: StripedCounter
    /// The logged lookups of accounts with `queryLog` on, waiting for the store's writer
    /// (`QueryLogStore`), which drains it off the request threads.
    public let queryLog = QueryLogQueue()

    /// `clock` gives the time client signatures and client rate limits are checked against.
    public init(
        registry: AccountRegistry, accountStore: (any AccountPersistence)?, adminToken: String?, limits: Limits = Limits(),
        clock: any WallClock = SystemClock()
    ) {
        self.registry = registry
        self.accountStore = accountStore
        self.adminToken = adminToken
        self.limits = limits
        self.authenticator = ClientAuthenticator(clock: clock)
        self.rateLimiter = ClientRateLimiter(clock: clock)
        self.recordsRequestDurations = limits.requestDurations
        let clients = ClientRules(trustedProxies: limits.trustedProxies, keying: limits.clientKeying)
        let state = ServiceState(), activity = MetricsActivity(), refusals = StripedCounter()
        let durations = DurationHistograms(slots: EngineMetrics.requestDurationSlots)
        self.clients = clients
        self.state = state
        self.metricsActivity = activity
        self.unknownAccountRefusals = refusals
        self.unknownAccountDurations = durations
        let lookups = Lookups(clients: clients, geo: limits.geo), dnsMessages = DNSMessageMetrics()
        let admin = AdminHandler(registry: registry, accountStore: accountStore, state: state)
        handlers = RouteHandlers(
            ops: OpsHandler(
                registry: registry, state: state, metricsAccounts: limits.metricsAccounts, activity: activity,
                dnsMessages: dnsMessages, unknownAccountRefusals: refusals, unknownAccountDurations: durations),
            admin: admin,
            resolve: ResolveHandler(maxHosts: limits.maxHostsPerResolve, clients: clients, lookups: lookups),
            cache: CacheHandler(
                maxHosts: limits.maxHostsPerResolve, maxListLimit: limits.maxCacheListLimit, clients: clients, state: state),
            preload: PreloadHandler(
                maxHosts: limits.maxPreloadHosts, concurrency: limits.preloadConcurrency, clients: clients, state: state),
            stats: StatsHandler(),
            queryLog: QueryLogHandler(state: state),
            policy: PolicyHandler(admin: admin),
            emas: EMASHandler(clients: clients, lookups: lookups, advertisedAddresses: limits.advertisedAddresses),
            dohJSON: DoHJSONHandler(clients: clients, lookups: lookups),
            rfc8484: RFC8484Handler(clients: clients, lookups: lookups, metrics: dnsMessages),
            console: ConsoleHandler(sessions: ConsoleSessions(clock: clock), adminTokenMatches: Self.tokenMatcher(adminToken)))
        precondition(RequestDurations.slotCount() <= EngineMetrics.requestDurationSlots, "more tenant routes than request-duration slots")
    }

    /// `/readyz` answers 200 only while this is true (after the warm load, until shutdown starts).
    public var isReady: Bool {
        get { state.isReady }
        set { state.isReady = newValue }
    }

    /// Adds families to `/metrics`, e.g. the store's counters: `source` writes its samples into
    /// the scrape's emitter, after the service's own families.
    public func addMetricsSource(_ source: @escaping @Sendable (inout MetricsEmitter) -> Void) {
        state.addMetricsSource(source)
    }

    /// Lets `/readyz` report the store's state in its body.
    public func setStoreHealth(_ source: @escaping @Sendable () -> PersistenceHealth) {
        state.setStoreHealth(source)
    }

    /// Shares account changes and cache changes with the other replicas (Redis configured):
    /// admin writes then go to Redis first. Set before the listeners start.
    public func setReplication(_ replication: any Replication) {
        state.setReplication(replication)
    }

    /// Nil unless replicas share their state (`setReplication`).
    var replication: (any Replication)? { state.replication }

    /// Lets `/metrics` report responses by status.
    public func attach(_ metrics: HTTPMetrics) {
        state.attach(metrics)
    }

    /// The client network of `request` (`ClientRules.network(of:)`): the network an account with
    /// `ispEnable` answers it for.
    public func clientNetwork(of request: HTTPRequest) -> String { clients.network(of: request) }

    /// Routes one request through the route table: path (404), listener (404), admin token,
    /// method (405 with `Allow`), account (404), then the pipeline (`run`): limits → authenticate →
    /// authorise → open → arguments → cached hit (`cachedHit`) → replay check (signed changes) →
    /// handler.
    public func handle(_ request: consuming HTTPRequest) -> HandlerResult {
        // Taken for every request: an account that logs lookups records their durations too.
        let started = MonotonicClock.nanoseconds()
        var routed = Routed()
        let result = route(consume request, &routed)
        return finished(result, routed, started: started)
    }

    /// `result` with its response, now or when it comes, labelled and timed (`finish`): every
    /// handler's, and the fast path's lookup of a miss.
    func finished(_ result: HandlerResult, _ routed: Routed, started: UInt64) -> HandlerResult {
        switch result {
        case .response(let response): .response(finish(response, routed, started: started))
        case .deferred(let start): .deferred { respond in start { respond(self.finish($0, routed, started: started)) } }
        }
    }

    /// What the router learnt of a request, for its metrics: its route (the first row of its
    /// path when no method matched) and the account's engine. Routes are rows of the route
    /// table, pointed to as the fast path does (`PathMatch.rows`): a `Route` copy retains every
    /// string, array and closure in it. Sendable: the table is built once and never changes, so
    /// the rows may be read from the thread that completes a deferred request.
    struct Routed: @unchecked Sendable {
        var route: UnsafePointer<Route>?
        /// For a path with an account: the route its duration is recorded under (the row run, or
        /// the path's first row when no method matched).
        var timed: UnsafePointer<Route>?
        var engine: ResolverEngine?
        /// The request, kept only for an account that logs its lookups (`logLookup`).
        var request: HTTPRequest?
        /// The fast path's miss of an account that logs its lookups: the question and client it
        /// read from the borrowed request, which the response completes (in place of `request`).
        var question: LoggedLookup?
    }

    /// Labels a response with its endpoint (and, for the access log, its account) and records
    /// the duration of a tenant request.
    private func finish(_ response: consuming HTTPResponse, _ routed: Routed, started: UInt64) -> HTTPResponse {
        guard let route = routed.route else { return response }
        response.endpoint = route.pointee.endpoint
        response.logAccount = routed.engine?.accountID
        if let timed = routed.timed, recordsRequestDurations {
            recordDuration(slot: RequestDurations.slot(timed.pointee, source: response.source), engine: routed.engine, started: started)
        }
        if let engine = routed.engine, engine.lookupOptions.logsQueries, Self.logsLookups(route.pointee) {
            if let request = routed.request {
                logLookup(generalLookup(request, route.pointee, response), engine: engine, format: route.pointee.format, started: started)
            } else if var lookup = routed.question {
                (lookup.source, lookup.status) = (response.source, response.status)
                lookup.rcode = Self.responseCode(response, route.pointee)
                logLookup(lookup, engine: engine, format: route.pointee.format, started: started)
            }
        }
        return response
    }

    /// Records how long a tenant request took since `started`, in its duration slot
    /// (`RequestDurations.slot`: its route and its answer's source), in its account's
    /// histograms (without an account: in the totals only). Both paths record their tenant
    /// requests here.
    func recordDuration(slot: Int, engine: ResolverEngine?, started: UInt64) {
        let elapsed = MonotonicClock.nanoseconds() &- started
        if let engine {
            engine.metrics.requestDurationRecorder.record(slot: slot, nanoseconds: elapsed)
        } else {
            unknownAccountDurations.record(slot: slot, nanoseconds: elapsed)
        }
    }

    private func route(_ request: consuming HTTPRequest, _ routed: inout Routed) -> HandlerResult {
        var path = request.path
        let found = path.withUTF8 { routeMatcher.match(UnsafeRawBufferPointer($0)) }
        let segments = found?.segments ?? PathSegments(UnsafeRawBufferPointer(start: nil, count: 0))
        let listener = request.listener
        let adminListener = !limits.separateOpsListener || listener == .ops
        // The operations listener serves the tenant API too, to admin callers only (below).
        let separate = limits.separateOpsListener
        // The path's rows this listener serves, looked through in place (no array per request).
        let rows = found?.rows ?? UnsafeBufferPointer(start: nil, count: 0)
        // Rows are read in place: a `Route` passed by value is a copy of every string, array and
        // closure in it.
        let visible = { (row: UnsafePointer<Route>) in
            row.pointee.surface.serves(listener, separate: separate) || (adminListener && row.pointee.tenantIndex != nil)
        }
        func firstRow(_ accepted: (UnsafePointer<Route>) -> Bool) -> UnsafePointer<Route>? {
            guard let base = rows.baseAddress else { return nil }
            for index in rows.indices where visible(base + index) && accepted(base + index) { return base + index }
            return nil
        }
        guard let firstVisible = firstRow({ _ in true }) else {
            return .response(APIError(.notFound, "no such endpoint: \(request.path)").response)
        }
        // The row that serves the request when its method is allowed (rows may share a method
        // and tell requests apart by `Route.condition`), else the first that would accept it:
        // its account and format apply from here.
        let servedRow = firstRow { $0.pointee.method == request.method && Route.accepts($0, request) }
        let first = servedRow ?? firstRow { Route.accepts($0, request) } ?? firstVisible
        routed.route = first
        // The fast path reads only canonical paths: a request it never read keeps the hit step.
        if !segments.isCanonical { request.fastPathDeclined = false }
        // What the pipeline's `Route.Match` will hold besides the request, which moves into it last.
        var admin = false
        var engineOfMatch: ResolverEngine?
        var id: String?
        // The admin token is checked before the method, so the admin API's methods are not told
        // to whoever has no token.
        if first.pointee.access == .admin, let refusal = adminRefusal(request) { return .response(refusal.response) }
        // On the listener of the admin API, an admin caller (the token, or the console's session)
        // may use every account's tenant API without its client keys; on the operations listener
        // only an admin caller may.
        if adminListener, first.pointee.tenantIndex != nil {
            if request.listener == .ops && limits.separateOpsListener {
                if let refusal = adminRefusal(request) { return .response(first.pointee.format.response(refusal)) }
                admin = true
            } else if Self.offersAdminCredential(request) {
                admin = adminCheck(request) == nil
            }
        }
        if let account = Route.account(of: first, segments, request) {
            routed.timed = first
            let engine = registry.engine(account)
            routed.engine = engine
            if let engine, engine.lookupOptions.logsQueries { routed.request = request }
            // A method the path does not serve is a 405 whatever the account (`TRACE /resolve`
            // is 405, whichever `uid` it names).
            if servedRow != nil {
                // While accounts are hidden, a request to a missing one goes down the pipeline
                // without an engine, which refuses it as a signed account would (`admit`).
                if let engine {
                    engineOfMatch = engine
                } else if !registry.hidesAccounts {
                    // Guessing account ids is limited too: such requests share one bucket per client.
                    if let refusal = rateLimitRejection(for: request, engine: nil) {
                        return .response(first.pointee.format.response(refusal))
                    }
                    return .response(first.pointee.format.response(APIError(.unknownAccount, "no account '\(account)'")))
                }
            }
        }
        if let index = first.pointee.idIndex { id = segments.text(index, of: request.path) }
        guard let servedRow else {
            let allowed = rows.indices.map { rows.baseAddress! + $0 }.filter(visible).map(\.pointee.method)
                .reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            return .response(first.pointee.format.response(methodNotAllowed(allowed.joined(separator: ", "))))
        }
        routed.route = servedRow
        if routed.timed != nil { routed.timed = servedRow }
        let match = Route.Match(request: consume request, engine: engineOfMatch, id: id, admin: admin)
        return run(servedRow.pointee, consume match)
    }

    /// The pipeline one routed request passes: each step answers the request itself or lets it
    /// through to the next. An argument with a control character (`QueryArguments.refusal`) is
    /// refused first: nothing, not even a signature check, reads arguments that were not kept.
    private func run(_ route: Route, _ match: consuming Route.Match) -> HandlerResult {
        if let refusal = match.request.query.refusal { return .response(route.format.response(refusal)) }
        if let refusal = checkLimits(route, match) { return .response(route.format.response(refusal)) }
        switch admit(route, consume match) {
        case .proceed(let admitted):
            // An argument the route does not read is refused, not ignored (`RouteArguments`).
            if let arguments = route.arguments,
                let refusal = RouteArguments.refusal(admitted.request.query, arguments, method: route.method, path: admitted.request.path)
            {
                return sealResponse(.response(route.format.response(refusal)), admitted)
            }
            // A single cached name is answered by the route's hit reader, as on the fast path
            // (unless the fast path already ran it on these arguments).
            if !admitted.request.fastPathDeclined, let hit = cachedHit(route, admitted) {
                return sealResponse(.response(hit), admitted)
            }
            return sealResponse(runChange(route, admitted), admitted)
        case .answer(let response): return .response(response)
        }
    }

    /// The steps between the limits and the handler: authenticate → authorise → open (the
    /// encryption step). The fast path runs the same checks on the borrowed request head
    /// (`fastPathAdmits`: `authenticateTenant`, and `RequestOpening.plainRefusal` for a request
    /// without `enc`): one implementation of each check.
    func admit(_ route: Route, _ match: consuming Route.Match) -> Opening {
        if !match.admin, let role = route.access.role(for: match.request) {
            guard let engine = match.engine else { return .answer(route.format.response(hiddenAccountRefusal(route, match.request))) }
            switch authenticateTenant(match.request, access: route.access, role: role, engine: engine) {
            case .success(let authentication): match.authentication = authentication
            case .failure(let refusal): return .answer(route.format.response(refusal))
            }
        }
        return openRequest(route, consume match)
    }

    /// For a request to an account that does not exist while accounts are hidden
    /// (`AccountRegistry.hidesAccounts`): the route's own authentication run against
    /// `AccountConfig.hidden`, so that the refusal (status, code, message) and the work spent are
    /// those of an account that requires signatures and has no key of the caller's. (A route any
    /// caller may use, EMAS `/ss`, does not come here: it is answered as for every account.)
    func hiddenAccountRefusal(_ route: Route, _ request: HTTPRequest) -> APIError {
        let authenticated: Result<Authentication, APIError>
        switch route.access {
        case .emasSigned: authenticated = authenticateEMAS(request, config: .hidden)
        case .dohJSON: authenticated = authenticateDoHJSON(request, config: .hidden)
        default: authenticated = authenticator.authenticate(request, config: .hidden)
        }
        guard case .failure(let refusal) = authenticated else {
            // No key can pass a check against no key; were one to, nothing is served all the same.
            return ClientAuthenticator.unauthorized(ClientAuthenticator.badSignature)
        }
        return refusal
    }

    /// The limits step, before any authentication work is spent: 429 when the client of a
    /// tenant request is over its rate (`rateLimitRejection`), else nil. Probes, `/metrics`, the
    /// admin API and admin callers of the tenant API are not limited. (The upstream budget is the engine's, where it starts an
    /// upstream query.)
    func checkLimits(_ route: Route, _ match: Route.Match) -> APIError? {
        if match.admin { return nil }
        guard let engine = match.engine else {
            // A tenant route without an engine: a missing account while accounts are hidden,
            // limited as `route` limits guesses when they are not.
            return route.tenantIndex == nil ? nil : rateLimitRejection(for: match.request, engine: nil)
        }
        return rateLimitRejection(for: match.request, engine: engine)
    }

    /// Authenticate → authorise, for a tenant route that needs `role` (the replay check of a
    /// signed change comes after the arguments are checked: `runChange`). An open
    /// account (no client keys; one flag the engine holds) costs nothing more.
    func authenticateClient(
        _ request: some SignedRequest, role: ClientKey.Role, engine: ResolverEngine
    ) -> Result<Authentication, APIError> {
        guard engine.lookupOptions.hasClientKeys else { return .success(.anonymous) }
        let authentication: Authentication
        switch engine.withConfig({ authenticator.authenticate(request, config: $0) }) {
        case .success(let value): authentication = value
        case .failure(let refusal): return .failure(refusal)
        }
        if let refusal = authenticator.authorise(authentication, required: role) { return .failure(refusal) }
        return .success(authentication)
    }

    // openRequest and sealResponse, the encryption step: Crypto/HTTPDNSService+Encryption.swift.

    func methodNotAllowed(_ allow: String) -> APIError {
        APIError(.methodNotAllowed, "allowed methods: \(allow)", headers: [("Allow", allow)])
    }
}
