import HTTPDNSCore

/// One request of the HTTP/1.1 client, from the loop taking it to its completion. Confined to
/// the loop thread.
final class HTTP1Transfer {
    let request: UpstreamHTTPRequest
    /// Where the request target starts in `request.url`'s UTF-8.
    let target: Int
    /// Monotonic milliseconds after which the transfer ends with `.timeout`.
    let deadline: Int64
    /// The connection carrying it; nil while it waits for one.
    var connection: HTTP1Connection?
    /// Already sent again on a fresh connection after a reused one failed.
    var retried = false
    private var completion: (@Sendable (Result<UpstreamHTTPResponse, UpstreamError>) -> Void)?

    init(
        request: UpstreamHTTPRequest, target: Int, deadline: Int64,
        completion: @escaping @Sendable (Result<UpstreamHTTPResponse, UpstreamError>) -> Void
    ) {
        self.request = request
        self.target = target
        self.deadline = deadline
        self.completion = completion
    }

    var isDone: Bool { completion == nil }

    /// Calls the completion (once: later calls do nothing) and lets go of the connection.
    func finish(_ result: Result<UpstreamHTTPResponse, UpstreamError>) {
        connection = nil
        guard let completion else { return }
        self.completion = nil
        completion(result)
    }
}

@available(*, unavailable)
extension HTTP1Transfer: Sendable {}
