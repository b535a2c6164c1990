/// A request as the handlers see it: everything copied out of libmicrohttpd, so a handler can keep
/// it after the access callback returned (for a suspended connection) and tests can build one.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path without the query string, percent-decoded by libmicrohttpd.
    public var path: String
    /// Query arguments (the first value of each name).
    public var query: QueryArguments
    /// The `Authorization` header, if any.
    public var authorization: String?
    public var body: [UInt8]
    /// The peer's address (raw; see `peer` for its text).
    public var peerAddress: PeerAddress?
    /// Every `X-Forwarded-For` field of the request joined with `, ` in the order received
    /// (RFC 9110 §5.3); nil when there is none.
    public var forwardedFor: String?
    /// The listener the request arrived on.
    public var listener: Listener = .main
    /// The `Accept` header, if any (`/dns-query` serves the DoH JSON API for `application/dns-json`).
    public var accept: String?
    /// The `Content-Type` header, if any (RFC 8484 POST bodies are `application/dns-message`).
    public var contentType: String?
    /// The `If-Match` header, if any (a conditional `PUT` of the policy document).
    public var ifMatch: String?
    /// The fast path read this request as it arrived and did not answer it (`HTTPServer`): the
    /// pipeline's hit step, which would run the same reader on the same arguments, is skipped
    /// (the handler's lookup still asks the cache first).
    var fastPathDeclined = false
    /// The access log's id of the request (`X-Request-Id`), nil without the access log.
    public var requestID: String?
    /// The console's session cookie (`ConsoleSessions.cookieName`), if any.
    public var consoleSession: String?
    /// The console's CSRF header (`ConsoleSessions.csrfHeader`), if any.
    public var csrfToken: String?
    /// The request arrived over HTTPS (the console's cookie is then `Secure`).
    public var isTLS = false

    public init(
        method: String, path: String, query: [String: String] = [:], authorization: String? = nil, body: [UInt8] = [],
        peer: String? = nil, forwardedFor: String? = nil
    ) {
        self.init(
            method: method, path: path, query: QueryArguments(query), authorization: authorization, body: body,
            peerAddress: peer.flatMap(PeerAddress.init), forwardedFor: forwardedFor)
    }

    public init(
        method: String, path: String, query: QueryArguments, authorization: String?, body: [UInt8],
        peerAddress: PeerAddress?, forwardedFor: String?
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.authorization = authorization
        self.body = body
        self.peerAddress = peerAddress
        self.forwardedFor = forwardedFor
    }
}

extension HTTPRequest {
    /// The peer's address as text (computed on each call).
    public var peer: String? { peerAddress?.text }
}

extension HTTPRequest: SignedRequest {
    /// The request's own copies, as bytes (its arguments listed in a temporary buffer). The
    /// closures capture the parts they read, not `self`: a closure that captured the request
    /// copied all of it at each level (callgrind: four copies, 1 600 instructions a request).
    public func withSignedParts<Result>(_ body: (SignedParts) -> Result) -> Result {
        var method = method, path = path
        let query = query, content = self.body, authorization = authorization
        return method.withUTF8 { method in
            path.withUTF8 { path in
                query.withPairs { arguments in
                    content.withUnsafeBytes { content in
                        func parts(_ authorization: UnsafeRawBufferPointer?) -> Result {
                            body(
                                SignedParts(
                                    method: UnsafeRawBufferPointer(method), path: UnsafeRawBufferPointer(path), arguments: arguments,
                                    hasRepeatedNames: query.hasRepeatedNames, authorization: authorization, body: content))
                        }
                        guard var authorization else { return parts(nil) }
                        return authorization.withUTF8 { parts(UnsafeRawBufferPointer($0)) }
                    }
                }
            }
        }
    }
}

/// What a handler decided: a response now, or later (the connection is suspended meanwhile and
/// resumed when `start` hands its response to the responder, from any thread, exactly once).
public enum HandlerResult: Sendable {
    case response(HTTPResponse)
    case deferred(@Sendable (_ respond: @escaping @Sendable (consuming HTTPResponse) -> Void) -> Void)
}
