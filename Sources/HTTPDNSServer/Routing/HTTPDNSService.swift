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

        public init(
            maxPreloadHosts: Int = 10_000, preloadConcurrency: Int = 32, trustedProxies: [CIDR] = [],
            separateOpsListener: Bool = false
        ) {
            self.maxPreloadHosts = maxPreloadHosts
            self.preloadConcurrency = preloadConcurrency
            self.trustedProxies = trustedProxies
            self.separateOpsListener = separateOpsListener
        }
    }

    let registry: AccountRegistry
    let accountStore: (any AccountPersistence)?
    let adminToken: String?
    let limits: Limits
    private let readyFlag = Atomic<Bool>(false)
    private let extraMetrics: Mutex<[@Sendable () -> String]> = Mutex([])
    let httpMetrics: Mutex<HTTPMetrics?> = Mutex(nil)

    public init(registry: AccountRegistry, accountStore: (any AccountPersistence)?, adminToken: String?, limits: Limits = Limits()) {
        self.registry = registry
        self.accountStore = accountStore
        self.adminToken = adminToken
        self.limits = limits
    }

    /// `/readyz` answers 200 only while this is true (after the warm load, until shutdown starts).
    public var isReady: Bool {
        get { readyFlag.load(ordering: .acquiring) }
        set { readyFlag.store(newValue, ordering: .releasing) }
    }

    /// Adds lines (complete `# HELP`/`# TYPE`/samples) to `/metrics`, e.g. the store's counters.
    public func addMetricsSource(_ source: @escaping @Sendable () -> String) {
        extraMetrics.withLock { $0.append(source) }
    }

    /// Lets `/metrics` report responses by status.
    public func attach(_ metrics: HTTPMetrics) {
        httpMetrics.withLock { $0 = metrics }
    }

    var metricsSources: [@Sendable () -> String] { extraMetrics.withLock { $0 } }

    /// Routes one request.
    public func handle(_ request: HTTPRequest) -> HandlerResult {
        let segments = PathSegments(request.path)
        let isProbe = segments.count == 1 && (segments[0] == "healthz" || segments[0] == "readyz")
        let isOps = (segments.count == 1 && segments[0] == "metrics")
            || (segments.count >= 2 && segments[0] == "v1" && segments[1] == "accounts")
        if limits.separateOpsListener && !isProbe && isOps != (request.listener == .ops) {
            return .response(APIError(.notFound, "no such endpoint: \(request.path)").response)
        }
        switch segments.count {
        case 1:
            switch segments[0] {
            case "healthz": return only("GET", request) { healthz() }
            case "readyz": return only("GET", request) { readyz() }
            case "metrics": return only("GET", request) { metrics() }
            default: break
            }
        case 2 where segments[0] == "v1" && segments[1] == "accounts":
            return admin(request) { only("GET", request) { listAccounts() } }
        case 3 where segments[0] == "v1" && segments[1] == "accounts":
            let id = String(segments[2])
            return admin(request) {
                switch request.method {
                case "GET": .response(getAccount(id))
                case "PUT": .response(putAccount(id, body: request.body))
                case "DELETE": .response(deleteAccount(id))
                default: .response(methodNotAllowed("GET, PUT, DELETE"))
                }
            }
        case 3 where segments[0] == "v1":
            let operation = segments[2]
            guard operation == "resolve" || operation == "cache" || operation == "preload" || operation == "stats" else { break }
            guard let engine = registry.engine(segments[1]) else {
                return .response(APIError(.unknownAccount, "no account '\(segments[1])'").response)
            }
            switch operation {
            case "resolve": return only("GET", request) { resolve(request, engine: engine) }
            case "stats": return only("GET", request) { .response(stats(engine)) }
            case "preload": return only("POST", request) { preload(request, engine: engine) }
            default:
                switch request.method {
                case "GET": return .response(cacheGet(request, engine: engine))
                case "DELETE": return .response(cacheDelete(request, engine: engine))
                default: return .response(methodNotAllowed("GET, DELETE"))
                }
            }
        case 4 where segments[0] == "v1" && segments[2] == "cache" && segments[3] == "refresh":
            guard let engine = registry.engine(segments[1]) else {
                return .response(APIError(.unknownAccount, "no account '\(segments[1])'").response)
            }
            return only("POST", request) { .response(cacheRefresh(engine)) }
        default:
            break
        }
        return .response(APIError(.notFound, "no such endpoint: \(request.path)").response)
    }

    private func only(_ method: String, _ request: HTTPRequest, _ body: () -> HandlerResult) -> HandlerResult {
        request.method == method ? body() : .response(methodNotAllowed(method))
    }

    func methodNotAllowed(_ allow: String) -> HTTPResponse {
        APIError(.methodNotAllowed, "allowed methods: \(allow)", headers: [("Allow", allow)]).response
    }
}

/// The non-empty `/`-separated segments of a path, without an array: routing runs on every
/// request. Segments are kept as index ranges of the path (no reference counting until one is
/// read). Paths with more than `capacity` segments report `count` as `capacity + 1`.
struct PathSegments {
    static let capacity = 4
    private(set) var count = 0
    private let path: String
    private var ranges: (Range<String.Index>, Range<String.Index>, Range<String.Index>, Range<String.Index>)

    init(_ path: String) {
        self.path = path
        let empty = path.startIndex..<path.startIndex
        ranges = (empty, empty, empty, empty)
        var start: String.Index?
        var index = path.startIndex
        let utf8 = path.utf8
        while index < path.endIndex {
            if utf8[index] == UInt8(ascii: "/") {
                if let first = start { append(first..<index) }
                start = nil
            } else if start == nil {
                start = index
            }
            index = utf8.index(after: index)
        }
        if let first = start { append(first..<path.endIndex) }
    }

    private mutating func append(_ range: Range<String.Index>) {
        switch count {
        case 0: ranges.0 = range
        case 1: ranges.1 = range
        case 2: ranges.2 = range
        case 3: ranges.3 = range
        default: break
        }
        count = min(count + 1, Self.capacity + 1)
    }

    subscript(index: Int) -> Substring {
        switch index {
        case 0: path[ranges.0]
        case 1: path[ranges.1]
        case 2: path[ranges.2]
        default: path[ranges.3]
        }
    }
}
