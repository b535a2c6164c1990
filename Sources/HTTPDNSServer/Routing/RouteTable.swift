/// Every endpoint of the service, built once: the only place routes exist. Its `matcher` finds a
/// request's rows by path, for `HTTPDNSService.handle` (which then picks one by listener and
/// method) and for the cached hit (`fastResponse`, which takes the row's hit reader); the rows of
/// one path are listed in the order their methods appear in `Allow`.
struct RouteTable: Sendable {
    let routes: [Route]
    /// The distinct paths, in table order, after `other` (requests no route matched): the
    /// `endpoint` label of `/metrics`, numbered by `Route.endpoint`.
    let endpoints: [String]
    /// The routes of paths with an account (the tenant API of every wire format), numbered by
    /// `Route.tenantIndex`: what request durations are recorded per.
    let tenantRoutes: [Route]
    /// Finds the rows of a request's path, for the general path and the cached hit alike.
    let matcher: RouteMatcher

    /// `endpoints[0]`: requests no route matched.
    static let otherEndpoint = 0

    init(routes: [Route]) {
        var endpoints = ["other"]
        var numbered: [Route] = []
        var tenant: [Route] = []
        for var route in routes {
            if let index = endpoints.firstIndex(of: route.path) {
                route.endpoint = index
            } else {
                route.endpoint = endpoints.count
                endpoints.append(route.path)
            }
            // Every row of a path with an account is the tenant API (`POST /dns-query` beside
            // `GET /dns-query?uid=`), timed under its own wire format.
            if routes.contains(where: { $0.path == route.path && ($0.accountIndex != nil || $0.accountArgument != nil) }) {
                route.tenantIndex = tenant.count
                tenant.append(route)
            }
            numbered.append(route)
        }
        self.routes = numbered
        self.endpoints = endpoints
        self.tenantRoutes = tenant
        matcher = RouteMatcher(numbered)
    }

    /// The row of `method`, `path` and `format`, which must be in the table.
    func route(_ method: String, _ path: String, format: WireFormat = .v1) -> Route {
        routes.first { $0.method == method && $0.path == path && $0.format == format }!
    }

    static let standard = RouteTable(routes: [
        Route("GET", "/healthz", .both, .anyone) { handlers, _ in handlers.ops.healthz() },
        Route("GET", "/readyz", .both, .anyone) { handlers, _ in handlers.ops.readyz() },
        Route("GET", "/metrics", .ops, .anyone) { handlers, match in handlers.ops.metrics(listener: match.request.listener) },
        Route("GET", "/v1/accounts", .ops, .admin) { handlers, _ in handlers.admin.listAccounts() },
        Route("GET", "/v1/accounts/{id}", .ops, .admin) { handlers, match in .response(handlers.admin.getAccount(match.id!)) },
        Route("PUT", "/v1/accounts/{id}", .ops, .admin) { handlers, match in
            handlers.admin.putAccount(match.id!, request: match.request)
        },
        Route("DELETE", "/v1/accounts/{id}", .ops, .admin) { handlers, match in
            handlers.admin.deleteAccount(match.id!, request: match.request)
        },
        Route("GET", "/v1/querylog", .ops, .admin) { handlers, match throws(APIError) in try handlers.queryLog.allEntries(match.request) },
        // The web console (docs/console.md): its page and files, and its session; the rest it
        // asks of the admin and tenant APIs.
        Route("GET", "/console", .ops, .anyone) { handlers, _ in .response(handlers.console.page()) },
        Route("GET", "/console/console.js", .ops, .anyone) { handlers, _ in .response(handlers.console.script(ConsoleAssets.consoleJS)) },
        Route("GET", "/console/console-tryit.js", .ops, .anyone) { handlers, _ in
            .response(handlers.console.script(ConsoleAssets.consoleTryItJS))
        },
        Route("GET", "/console/console-stats.js", .ops, .anyone) { handlers, _ in
            .response(handlers.console.script(ConsoleAssets.consoleStatsJS))
        },
        Route("GET", "/console/console-policy.js", .ops, .anyone) { handlers, _ in
            .response(handlers.console.script(ConsoleAssets.consolePolicyJS))
        },
        Route("GET", "/console/console-pages.js", .ops, .anyone) { handlers, _ in
            .response(handlers.console.script(ConsoleAssets.consolePagesJS))
        },
        Route("GET", "/console/console.css", .ops, .anyone) { handlers, _ in .response(handlers.console.style()) },
        Route("GET", "/console/session", .ops, .anyone) { handlers, match in .response(handlers.console.session(match.request)) },
        Route("POST", "/console/login", .ops, .anyone) { handlers, match in .response(handlers.console.login(match.request)) },
        Route("POST", "/console/logout", .ops, .admin) { handlers, match in .response(handlers.console.logout(match.request)) },
        Route("GET", "/v1/{account}/resolve", .main, .client(.resolve), hit: .v1Resolve) { handlers, match, engine throws(APIError) in
            try handlers.resolve.resolve(match.request, engine: engine)
        },
        Route("GET", "/v1/{account}/cache", .main, .clientResolveWithArgument("host")) { handlers, match, engine throws(APIError) in
            .response(try handlers.cache.cacheGet(match.request, engine: engine))
        },
        Route("DELETE", "/v1/{account}/cache", .main, .client(.manage)) { handlers, match, engine throws(APIError) in
            .response(try handlers.cache.cacheDelete(match.request, engine: engine))
        },
        Route("POST", "/v1/{account}/preload", .main, .client(.manage)) { handlers, match, engine throws(APIError) in
            try handlers.preload.preload(match.request, engine: engine)
        },
        Route("GET", "/v1/{account}/stats", .main, .client(.manage)) { handlers, match, engine throws(APIError) in
            .response(try handlers.stats.stats(match.request, engine: engine))
        },
        Route("GET", "/v1/{account}/stats/recent", .main, .client(.manage)) { handlers, _, engine in
            .response(handlers.stats.recent(engine))
        },
        Route("GET", "/v1/{account}/querylog", .main, .client(.manage)) { handlers, match, engine throws(APIError) in
            try handlers.queryLog.entries(match.request, engine: engine)
        },
        Route("GET", "/v1/{account}/policy/explain", .main, .client(.manage)) { handlers, match, engine throws(APIError) in
            try handlers.resolve.explain(match.request, engine: engine)
        },
        Route("POST", "/v1/{account}/cache/refresh", .main, .client(.manage)) { handlers, match, engine in
            .response(handlers.cache.cacheRefresh(engine))
        },
        Route("GET", "/v1/{account}/policy", .main, .client(.manage)) { handlers, match, engine throws(APIError) in
            try handlers.policy.get(match.request, engine: engine)
        },
        Route("PUT", "/v1/{account}/policy", .main, .client(.manage)) { handlers, match, engine throws(APIError) in
            try handlers.policy.put(match.request, engine: engine)
        },
        // The EMAS HTTPDNS API (docs/emas.md): refusals in its error format.
        Route("GET", "/{account}/d", .main, .client(.resolve), format: .emas, hit: .emas) { handlers, match, engine throws(APIError) in
            try handlers.emas.resolve(match.request, engine: engine, batch: false)
        },
        Route("GET", "/{account}/sign_d", .main, .emasSigned, format: .emas, hit: .emas) { handlers, match, engine throws(APIError) in
            try handlers.emas.resolve(match.request, engine: engine, batch: false)
        },
        Route("GET", "/{account}/resolve", .main, .client(.resolve), format: .emas) { handlers, match, engine throws(APIError) in
            try handlers.emas.resolve(match.request, engine: engine, batch: true)
        },
        Route("GET", "/{account}/sign_resolve", .main, .emasSigned, format: .emas) { handlers, match, engine throws(APIError) in
            try handlers.emas.resolve(match.request, engine: engine, batch: true)
        },
        Route("GET", "/{account}/ss", .main, .anyone, format: .emas) { handlers, _ in .response(handlers.emas.serviceAddresses()) },
        // The DoH JSON API (docs/doh-json.md): the account named by `uid`, refusals in its format.
        Route("GET", "/resolve", .main, .dohJSON, format: .json, accountArgument: "uid", hit: .dohJSON) {
            handlers, match, engine throws(APIError) in
            try handlers.dohJSON.resolve(match.request, engine: engine)
        },
        Route("GET", "/dns-query", .main, .dohJSON, format: .json, accountArgument: "uid", when: .acceptsDNSJSON, hit: .dohJSON) {
            handlers, match, engine throws(APIError) in try handlers.dohJSON.resolve(match.request, engine: engine)
        },
        // RFC 8484 (docs/rfc8484.md): DNS messages, `/dns-query` for the default account.
        Route("GET", "/dns-query", .main, .client(.resolve), format: .rfc8484, account: "default", hit: .rfc8484) {
            handlers, match, engine throws(APIError) in
            try handlers.rfc8484.answer(match.request, engine: engine)
        },
        Route("POST", "/dns-query", .main, .client(.resolve), format: .rfc8484, account: "default") {
            handlers, match, engine throws(APIError) in
            try handlers.rfc8484.answer(match.request, engine: engine)
        },
        Route("GET", "/v1/{account}/dns-query", .main, .client(.resolve), format: .rfc8484, hit: .rfc8484) {
            handlers, match, engine throws(APIError) in
            try handlers.rfc8484.answer(match.request, engine: engine)
        },
        Route("POST", "/v1/{account}/dns-query", .main, .client(.resolve), format: .rfc8484) { handlers, match, engine throws(APIError) in
            try handlers.rfc8484.answer(match.request, engine: engine)
        },
    ])
}
