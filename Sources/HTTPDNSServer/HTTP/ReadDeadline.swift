/// Where a connection is in receiving its current request, and until when it may stay there:
/// the rule `ConnectionTracker` applies, with no clock and no socket of its own.
///
/// - `opening`: accepted (TLS handshake, then the first request); the first request must have
///   arrived whole within `requestReadTimeout` of the accept.
/// - `idle`: a response was sent, the connection waits for the next request. libmicrohttpd's
///   idle timeout (`connectionTimeout`) closes a silent one; one that trickles the next
///   request line a byte at a time restarts that timeout with each byte, so it is cut at
///   `connectionTimeout + requestReadTimeout` after the last response.
/// - `reading`: the request line of a request after the first arrived; the rest of its head and
///   its body must arrive within `requestReadTimeout`.
/// - `handling`: the request arrived whole; the handler (or an upstream, for a suspended
///   request) answers it. No deadline here: that is the handler's business.
public struct ReadDeadline: Sendable, Equatable {
    public enum Phase: Int, Sendable {
        case opening = 0, idle = 1, reading = 2, handling = 3
    }

    /// Milliseconds; 0 for `requestReadTimeout` means no deadline at all.
    public var requestReadTimeout: Int
    public var idleTimeout: Int

    public init(requestReadTimeout: Int, idleTimeout: Int) {
        self.requestReadTimeout = requestReadTimeout
        self.idleTimeout = idleTimeout
    }

    /// The instant (same clock as `since`) after which a connection in `phase` since `since`
    /// is cut, or nil when none applies.
    public func deadline(_ phase: Phase, since: Int) -> Int? {
        guard requestReadTimeout > 0 else { return nil }
        switch phase {
        case .opening, .reading: return since + requestReadTimeout
        case .idle: return since + idleTimeout + requestReadTimeout
        case .handling: return nil
        }
    }

    /// The phase after the request line of a request was parsed: a connection that was idle
    /// starts reading now; one still opening keeps the deadline it had since the accept.
    public static func afterRequestLine(_ phase: Phase) -> Phase? {
        phase == .idle ? .reading : nil
    }
}
