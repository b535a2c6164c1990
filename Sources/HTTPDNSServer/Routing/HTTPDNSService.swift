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

        public init(maxPreloadHosts: Int = 10_000, preloadConcurrency: Int = 32, trustedProxies: [CIDR] = []) {
            self.maxPreloadHosts = maxPreloadHosts
            self.preloadConcurrency = preloadConcurrency
            self.trustedProxies = trustedProxies
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
/// request. Paths with more than `capacity` segments report `count` as `capacity + 1`.
struct PathSegments {
    static let capacity = 4
    private(set) var count = 0
    private var segments: (Substring, Substring, Substring, Substring) = ("", "", "", "")

    init(_ path: String) {
        var start: String.Index?
        var index = path.startIndex
        while index < path.endIndex {
            if path.utf8[index] == UInt8(ascii: "/") {
                if let first = start { append(path[first..<index]) }
                start = nil
            } else if start == nil {
                start = index
            }
            index = path.utf8.index(after: index)
        }
        if let first = start { append(path[first..<path.endIndex]) }
    }

    private mutating func append(_ segment: Substring) {
        switch count {
        case 0: segments.0 = segment
        case 1: segments.1 = segment
        case 2: segments.2 = segment
        case 3: segments.3 = segment
        default: break
        }
        count = min(count + 1, Self.capacity + 1)
    }

    subscript(index: Int) -> Substring {
        switch index {
        case 0: segments.0
        case 1: segments.1
        case 2: segments.2
        default: segments.3
        }
    }
}

