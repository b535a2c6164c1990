import HTTPDNSCore

/// The ``UpstreamError``s of the HTTP/1.1 client. Each carries in `underlying` the libcurl code
/// of the same failure (`CURLE_COULDNT_CONNECT` for a refused connection, and so on), so that
/// callers, logs and metrics see the same numbers whichever client ran the transfer.
enum HTTP1Failure {
    static func timeout(_ milliseconds: Int) -> UpstreamError {
        UpstreamError(.timeout, "HTTP/1.1 transfer timed out after \(milliseconds) ms", underlying: 28)
    }

    static func connect(_ detail: String) -> UpstreamError {
        UpstreamError(.transport, "HTTP/1.1 connect failed: \(detail)", underlying: 7)
    }

    static func send(_ detail: String) -> UpstreamError {
        UpstreamError(.transport, "HTTP/1.1 send failed: \(detail)", underlying: 55)
    }

    static func receive(_ detail: String) -> UpstreamError {
        UpstreamError(.transport, "HTTP/1.1 receive failed: \(detail)", underlying: 56)
    }

    /// The server closed the connection before a whole response came.
    static func closed(receivedAny: Bool) -> UpstreamError {
        receivedAny
            ? UpstreamError(.transport, "HTTP/1.1 response cut short by the server closing the connection", underlying: 18)
            : UpstreamError(.transport, "HTTP/1.1 server closed the connection without a response", underlying: 52)
    }

    static func response(_ failure: HTTP1ResponseParser.Failure) -> UpstreamError {
        switch failure {
        case .headerTooLarge:
            UpstreamError(.transport, "HTTP/1.1 response header block over \(EasyHandle.maximumHeaderSize) bytes", underlying: 23)
        case .bodyTooLarge:
            UpstreamError(.transport, "HTTP/1.1 response body over \(EasyHandle.maximumBodySize) bytes", underlying: 23)
        case .badChunk:
            UpstreamError(.transport, "HTTP/1.1 response has a malformed chunk", underlying: 56)
        case .truncated:
            closed(receivedAny: true)
        case .badStatusLine, .badHeaderLine, .badContentLength:
            UpstreamError(.transport, "HTTP/1.1 response is malformed (\(failure))", underlying: 8)
        }
    }
}
