import HTTPDNSCore

/// The handlers of the route table, each a value built once by the service with what it uses:
/// a route's handler is given these (and, for an account's route, the account's engine).
struct RouteHandlers: Sendable {
    let ops: OpsHandler
    let admin: AdminHandler
    let resolve: ResolveHandler
    let cache: CacheHandler
    let preload: PreloadHandler
    let stats: StatsHandler
    let queryLog: QueryLogHandler
    let policy: PolicyHandler
    let emas: EMASHandler
    let dohJSON: DoHJSONHandler
    let rfc8484: RFC8484Handler
    let console: ConsoleHandler
}
