/// The wire API a route speaks: decides how an error the pipeline (or the router) raises is
/// written, so every refusal reaches a client in the format it parses.
enum WireFormat: String, Sendable, CaseIterable {
    /// API v1: `{"error":{"code":..,"message":..}}` with the code's status.
    case v1
    /// The EMAS HTTPDNS API: `{"code":..,"message":..}` (`EMASRendering.error`).
    case emas
    /// The DoH JSON API: `{"Status":..,"Code":..,"Comment":..}` (`DoHJSONRendering.error`).
    case json
    /// RFC 8484 DNS messages: refusals of the HTTP request as API v1's JSON error (a DNS
    /// client reads the status; the body is for people).
    case rfc8484

    /// The position in `allCases`.
    var index: Int {
        switch self {
        case .v1: 0
        case .emas: 1
        case .json: 2
        case .rfc8484: 3
        }
    }

    func response(_ error: APIError) -> HTTPResponse {
        switch self {
        case .v1, .rfc8484: error.response
        case .emas: EMASRendering.error(error)
        case .json: DoHJSONRendering.error(error)
        }
    }
}
