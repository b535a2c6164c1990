/// The service's own limits on a request head, set well under libmicrohttpd's buffer so that a
/// request past them is answered with a JSON error: a request-target longer than `targetBytes`
/// is 414 `URITooLong`, a head (request line and header fields) longer than `headBytes` is 431
/// `HeaderTooLarge`. A head that does not fit libmicrohttpd's per-connection buffer
/// (`connectionMemoryLimit`) at all never reaches the service: libmicrohttpd 0.9.75 answers it
/// itself, with an HTML page and no `Content-Type` (README, "Errors", lists those answers).
struct RequestHeadLimits: Sendable {
    /// Request-target bytes at most, as sent (before percent-decoding).
    let targetBytes: Int
    /// Head bytes at most, as libmicrohttpd counts them (`MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE`).
    let headBytes: Int

    /// 8 KiB of target and 32 KiB of head, or less when the connection buffer is small: an eighth
    /// and a half of it (libmicrohttpd keeps the parsed fields and the response in the same
    /// buffer).
    init(connectionMemoryLimit: Int) {
        targetBytes = min(8192, connectionMemoryLimit / 8)
        headBytes = min(32_768, connectionMemoryLimit / 2)
    }

    /// The refusal for a request whose target is `targetLength` bytes and whose head is
    /// `headLength` bytes, or nil when both are within the limits.
    func refusal(targetLength: Int, headLength: Int) -> APIError? {
        if targetLength > targetBytes {
            return APIError(.uriTooLong, "the request-target is \(targetLength) bytes; at most \(targetBytes) are accepted")
        }
        if headLength > headBytes {
            return APIError(.headerTooLarge, "the request head is \(headLength) bytes; at most \(headBytes) are accepted")
        }
        return nil
    }
}
