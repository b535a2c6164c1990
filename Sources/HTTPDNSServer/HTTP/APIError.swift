/// An error answered to a client as `{"error":{"code":"...","message":"..."}}`.
public struct APIError: Error, Sendable, Equatable {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public var status: Int

        public init(rawValue: String) {
            self.rawValue = rawValue
            self.status = 500
        }

        public init(_ rawValue: String, status: Int) {
            self.rawValue = rawValue
            self.status = status
        }

        public static let invalidHost = Code("InvalidHost", status: 400)
        public static let invalidParameter = Code("InvalidParameter", status: 400)
        public static let missingArgument = Code("MissingArgument", status: 400)
        public static let tooManyHosts = Code("TooManyHosts", status: 400)
        public static let invalidBody = Code("InvalidBody", status: 400)
        public static let unauthorized = Code("Unauthorized", status: 401)
        public static let forbidden = Code("Forbidden", status: 403)
        /// The account's `domains` refuses the name.
        public static let domainNotAllowed = Code("DomainNotAllowed", status: 403)
        public static let unknownAccount = Code("UnknownAccount", status: 404)
        public static let notFound = Code("NotFound", status: 404)
        public static let methodNotAllowed = Code("MethodNotAllowed", status: 405)
        /// A conditional change whose `If-Match` names a version that is no longer current.
        public static let preconditionFailed = Code("PreconditionFailed", status: 412)
        /// A change that must be conditional (`If-Match`) and is not.
        public static let preconditionRequired = Code("PreconditionRequired", status: 428)
        public static let payloadTooLarge = Code("PayloadTooLarge", status: 413)
        public static let uriTooLong = Code("URITooLong", status: 414)
        public static let headerTooLarge = Code("HeaderTooLarge", status: 431)
        public static let rateLimited = Code("RateLimited", status: 429)
        public static let internalError = Code("InternalError", status: 500)
        public static let upstreamFailed = Code("UpstreamFailed", status: 502)
        public static let serviceUnavailable = Code("ServiceUnavailable", status: 503)
        public static let storeUnavailable = Code("StoreUnavailable", status: 503)
        public static let upstreamTimeout = Code("UpstreamTimeout", status: 504)
    }

    public var code: Code
    public var message: String
    public var headers: [(String, String)]

    public init(_ code: Code, _ message: String, headers: [(String, String)] = []) {
        self.code = code
        self.message = message
        self.headers = headers
    }

    public static func == (lhs: APIError, rhs: APIError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    /// The error object alone, for embedding in batch results.
    public func write(to writer: inout JSONWriter) {
        writer.raw("{")
        writer.key("code")
        writer.string(code.rawValue)
        writer.comma()
        writer.key("message")
        writer.string(message)
        writer.raw("}")
    }

    public var response: HTTPResponse {
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("error")
        write(to: &writer)
        writer.raw("}")
        return HTTPResponse(status: code.status, headers: headers, body: writer.bytes)
    }
}
