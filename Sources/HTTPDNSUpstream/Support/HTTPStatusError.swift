import HTTPDNSCore

/// Maps an upstream's HTTP status to an ``UpstreamError`` (one place for all adapters).
enum HTTPStatusError {
    /// nil for 2xx; 400 → `.badRequest`, 401/403 → `.permission`, 404 → `.notFound`, other →
    /// `.httpStatus`; the status is the `underlying` code.
    static func error(for status: Int, body: [UInt8]) -> UpstreamError? {
        if (200..<300).contains(status) { return nil }
        let snippet = String(decoding: body.prefix(200), as: UTF8.self)
        let message = "HTTP \(status)" + (snippet.isEmpty ? "" : ": \(snippet)")
        switch status {
        case 400: return UpstreamError(.badRequest, message, underlying: status)
        case 401, 403: return UpstreamError(.permission, message, underlying: status)
        case 404: return UpstreamError(.notFound, message, underlying: status)
        default: return UpstreamError(.httpStatus, message, underlying: status)
        }
    }
}
