import HTTPDNSCore

/// A complete response. libmicrohttpd adds `Content-Length`; every response has a `Content-Type`.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var contentType: String
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// What answered a lookup (the worst of its answers, `AnswerSource.combined`); nil for a
    /// response without one. The `source` label of request durations.
    var source: AnswerSource?
    /// The route's endpoint (`RouteTable.endpoints`), set by the router: the `endpoint` label of
    /// `httpdns_http_requests_total`.
    var endpoint = RouteTable.otherEndpoint
    /// The account the request was for, for the access log. Not sent.
    public var logAccount: String?

    public static let jsonType = jsonTypeLiteral.description
    /// The same as a C string for libmicrohttpd.
    static let jsonTypeLiteral: StaticString = "application/json; charset=utf-8"

    public init(status: Int, contentType: String = HTTPResponse.jsonType, headers: [(String, String)] = [], body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    public static func json(_ status: Int, _ writer: JSONWriter) -> HTTPResponse {
        HTTPResponse(status: status, body: writer.bytes)
    }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.contentType == rhs.contentType && lhs.body == rhs.body
            && lhs.headers.map { "\($0.0): \($0.1)" } == rhs.headers.map { "\($0.0): \($0.1)" }
    }
}
