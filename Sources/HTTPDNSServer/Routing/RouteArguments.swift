import HTTPDNSCore

/// The query arguments each endpoint of API v1 and the admin API reads: any other is a 400
/// naming it, so a mistyped or unsupported argument (`type=MX` on the cache list, `limt=5`,
/// `hots=` on resolve) is never silently ignored. The signature v1 arguments are allowed
/// everywhere (and `enc`, whose decrypted arguments are checked once opened). The compatibility
/// APIs (EMAS, DoH JSON, RFC 8484), whose existing clients add arguments of their own, are not
/// listed here and ignore what they do not read (docs/clients.md). `sdns-*` stands for every
/// argument named `sdns-NAME`.
enum RouteArguments {
    /// What one route accepts: the same set always, or (`GET /cache`) a set chosen by the request.
    enum Allowed: Sendable {
        case always(Names)
        /// `GET /v1/{account}/cache`: a host lookup with `host`, a listing without.
        case byArgument(String, with: Names, without: Names)

        func names(for query: QueryArguments) -> Names {
            switch self {
            case .always(let names): names
            case .byArgument(let argument, let with, let without): query[argument] != nil ? with : without
            }
        }
    }

    /// The argument names a route reads, as text (for the refusal's message) and as UTF-8, which
    /// a request's argument names are compared with where they lie.
    struct Names: Sendable, ExpressibleByArrayLiteral {
        let all: Set<String>
        private let utf8: [[UInt8]]

        init(arrayLiteral names: String...) {
            all = Set(names)
            utf8 = names.map { Array($0.utf8) }
        }

        var isEmpty: Bool { all.isEmpty }

        func contains(_ name: UnsafeRawBufferPointer) -> Bool {
            utf8.contains { candidate in candidate.withUnsafeBytes { $0.hasSameBytes(as: name) } }
        }
    }

    /// `METHOD path pattern` → what the route accepts; routes not listed are not checked.
    static let table: [String: Allowed] = [
        "GET /v1/{account}/resolve": .always(["host", "type", "client_ip", "short", paramArguments]),
        "GET /v1/{account}/cache": .byArgument(
            "host", with: ["host", "type", "client_ip", "short", "expired"], without: ["limit", "cursor"]),
        "DELETE /v1/{account}/cache": .always(["host"]),
        "POST /v1/{account}/preload": .always(["client_ip"]),
        "GET /v1/{account}/stats": .always(["limit", "cursor", "domain"]),
        "GET /v1/{account}/policy/explain": .always(["host", "client_ip", paramArguments]),
        "POST /v1/{account}/cache/refresh": .always([]),
        "GET /v1/{account}/policy": .always([]),
        "PUT /v1/{account}/policy": .always([]),
        "GET /v1/{account}/stats/recent": .always([]),
        "GET /v1/accounts": .always([]),
        "GET /v1/accounts/{id}": .always([]),
        "PUT /v1/accounts/{id}": .always([]),
        "DELETE /v1/accounts/{id}": .always([]),
    ]

    /// Stands for every `sdns-NAME` argument: the parameters apps send for the account's `rules`
    /// (docs/rules.md).
    static let paramArguments = "sdns-*"
    private static let paramPrefix: StaticString = "sdns-"

    /// The 400 for the first argument of `query` that `allowed` does not read (nil when all are
    /// read), listing what the endpoint takes.
    /// The names are compared as bytes where the request keeps them: this runs for every request
    /// to a listed route, and only a refusal makes a `String` of one.
    static func refusal(_ query: QueryArguments, _ allowed: Allowed, method: String, path: String) -> APIError? {
        let names = allowed.names(for: query)
        let unread = query.withPairs { pairs in
            pairs.first { !isRead($0.name, names) }.map { String(decoding: $0.name, as: UTF8.self) }
        }
        guard let name = unread else { return nil }
        let takes = names.isEmpty ? "no query arguments" : names.all.sorted().joined(separator: ", ")
        var detail = ""
        if case .byArgument(let argument, let with, _) = allowed, with.all.contains(name), query[argument] == nil {
            detail = " without \(argument)"
        }
        return APIError(
            .invalidParameter,
            "\(method) \(path)\(detail) does not take the argument '\(DecodedArgument.shown(name.utf8))' (it takes \(takes))")
    }

    /// Whether a route that reads `names` reads the argument `name`: one of them, a signature v1
    /// argument, or `sdns-NAME` where the route takes `sdns-*`.
    private static func isRead(_ name: UnsafeRawBufferPointer, _ names: Names) -> Bool {
        if SignatureV1.isSignatureArgument(name) { return true }
        if name.count >= paramPrefix.utf8CodeUnitCount,
            UnsafeRawBufferPointer(rebasing: name[..<paramPrefix.utf8CodeUnitCount]).equals(paramPrefix),
            names.all.contains(paramArguments)
        {
            return true
        }
        return names.contains(name)
    }
}
