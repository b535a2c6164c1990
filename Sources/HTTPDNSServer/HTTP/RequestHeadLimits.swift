/// The service's own limits on a request head, set well under libmicrohttpd's buffer so that a
/// request past them is answered with a JSON error: a request-target longer than `targetBytes`
/// is 414 `URITooLong`, a head (request line and header fields) longer than `headBytes` is 431
/// `HeaderTooLarge`. A head that does not fit libmicrohttpd's per-connection buffer
/// (`connectionMemoryLimit`) at all never reaches the service: libmicrohttpd 0.9.75 answers it
/// itself, with an HTML page and no `Content-Type` (docs/api.md, "Errors", lists those answers).
struct RequestHeadLimits: Sendable {
    /// Request-target bytes at most, as sent (before percent-decoding).
    let targetBytes: Int
    /// Head bytes at most, as libmicrohttpd counts them (`MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE`).
    let headBytes: Int

    /// Query arguments at most (`RawRequestURI.hasTooManyArguments`); a request with more is 414
    /// `URITooLong`. The API reads a dozen at most; libmicrohttpd keeps each in the connection's
    /// pool (about 50 bytes and its text), where the default 16 KiB ran out near 230.
    static let maximumArguments = 64

    /// 8 KiB of target and 32 KiB of head, or less when the connection buffer is small: a half and
    /// three quarters of it (libmicrohttpd keeps the parsed fields and the response head in the
    /// same buffer; at 16 KiB, the default, it serves heads up to about 14 KB, and the longest
    /// request the API accepts, a 5.2 KB target in a 7.2 KB head, must pass both limits:
    /// `bench/connection_memory.py`).
    init(connectionMemoryLimit: Int) {
        targetBytes = min(8192, connectionMemoryLimit / 2)
        headBytes = min(32_768, connectionMemoryLimit * 3 / 4)
    }

    /// The refusal for a request whose target is `targetLength` bytes (with more query arguments
    /// than `maximumArguments` when `tooManyArguments`) and whose head is `headLength` bytes, or
    /// nil when all are within the limits.
    func refusal(targetLength: Int, tooManyArguments: Bool = false, headLength: Int) -> APIError? {
        if tooManyArguments {
            return APIError(.uriTooLong, "the query has more than \(Self.maximumArguments) arguments, the most accepted")
        }
        if targetLength > targetBytes {
            return APIError(.uriTooLong, "the request-target is \(targetLength) bytes; at most \(targetBytes) are accepted")
        }
        if headLength > headBytes {
            return APIError(.headerTooLarge, "the request head is \(headLength) bytes; at most \(headBytes) are accepted")
        }
        return nil
    }
}
