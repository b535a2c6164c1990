/// One HTTP request an upstream adapter sends to its upstream: a libcurl transfer run by the
/// ``CurlEventLoop``. (The requests the service itself receives are HTTPDNSServer's `HTTPRequest`.)
public struct UpstreamHTTPRequest: Sendable, Hashable {
    /// The HTTP method; only what the upstream adapters need.
    public enum Method: String, Sendable, Hashable {
        case get = "GET"
        case post = "POST"
    }

    /// Absolute `http://` or `https://` URL, already percent-encoded.
    public var url: String
    public var method: Method
    /// Extra request headers as (name, value) pairs, sent in this order.
    public var headers: [HTTPHeader]
    /// Request body for POST (sent as is; set a `Content-Type` header yourself).
    public var body: [UInt8]
    /// Whole-transfer timeout in milliseconds (connect included); also the connect timeout.
    public var timeoutMilliseconds: Int

    public init(
        url: String,
        method: Method = .get,
        headers: [HTTPHeader] = [],
        body: [UInt8] = [],
        timeoutMilliseconds: Int
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeoutMilliseconds = timeoutMilliseconds
    }
}
