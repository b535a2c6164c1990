/// How a request's body is delimited, as far as the service checks it before libmicrohttpd
/// reads the body. A request with both `Content-Length` and `Transfer-Encoding` is the shape of
/// request smuggling (RFC 9112 §6.3: a proxy in front may delimit it by the one, libmicrohttpd
/// by the other, and the rest would be read as a second request): it is refused with 400 and
/// the connection is closed after the answer, so nothing after it on that connection is read.
enum RequestFraming {
    /// The 400 for a request that has a `Content-Length` and this `Transfer-Encoding` field
    /// (nil when it has none), or nil.
    static func refusal(transferEncoding: String?) -> APIError? {
        guard transferEncoding != nil else { return nil }
        return APIError(
            .invalidParameter,
            "Content-Length together with Transfer-Encoding (RFC 9112 §6.3): refused, and the connection is closed",
            headers: [("Connection", "close")])
    }
}
