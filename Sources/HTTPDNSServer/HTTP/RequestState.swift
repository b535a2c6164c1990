/// One request's progress through libmicrohttpd's access handler, as a value: each method takes
/// one event, moves the phase, and returns the action the caller then performs (queue a response,
/// suspend, resume, …). Nothing here touches a connection, a lock or the clock; `HTTPServer` owns
/// the side effects, so every transition can be tested without a socket.
///
/// The access handler is called once when the head arrived, once per body chunk, once more when
/// the request is complete, and once more after a suspended connection is resumed. An event the
/// current phase does not expect returns `.reject` (the caller answers `MHD_NO` and
/// libmicrohttpd closes the connection) or, for an answer that comes too late, `.drop`.
///
/// Phases and actions carry no payload (the deferred answer waits in the `RequestContext`, next
/// to the state): the value is a plain byte, so the cache-hit path, which holds one on the
/// stack, pays nothing to copy or destroy it.
struct RequestState: Sendable, Equatable {
    enum Phase: Sendable, Equatable {
        /// The head arrived; neither body bytes nor the end of the request yet.
        case receivingHead
        /// Body bytes arrived, all within the body limit.
        case receivingBody
        /// The body went over the limit: its bytes are read and discarded, the answer is a 413.
        case bodyTooLarge
        /// The request is complete and with the handler (or the fast path), on this thread.
        case dispatched
        /// The handler deferred its answer; the connection is suspended until it arrives.
        case suspended
        /// The deferred answer arrived (kept by the caller) and the connection was resumed: the
        /// next call sends it.
        case answerReady
        /// A response was queued: nothing else is sent for this request.
        case responded
        /// The connection went away before the request was answered.
        case aborted
    }

    enum Action: Sendable, Equatable {
        /// Return `MHD_YES` and wait for the next call.
        case proceed
        /// Keep this body chunk.
        case appendBody
        /// Forget the body kept so far and the rest to come: it is over the limit.
        case discardBody
        /// The request arrived whole without a body: try the fast path, then the handler.
        case answer
        /// The request arrived whole with its body: run the handler on it.
        case dispatch
        /// Answer 413: the body was over the limit.
        case refuseTooLarge
        /// Queue the response the caller has in hand (a refusal, or the handler's answer).
        case send
        /// Queue the deferred answer that was kept, now that the connection was resumed.
        case sendAnswer
        /// Suspend the connection and start the deferred work.
        case suspend
        /// Keep the answer and resume the connection.
        case resume
        /// Forget the connection's entry among the suspended ones; it must not be resumed.
        case forget
        /// Nothing to do: an answer after the request was answered or its connection closed.
        case drop
        /// The event is not valid in this phase: return `MHD_NO` (libmicrohttpd closes).
        case reject
    }

    private(set) var phase: Phase

    init(_ phase: Phase = .receivingHead) { self.phase = phase }

    /// Body bytes arrived: `total` bytes with those kept already, against the body `limit`.
    mutating func bodyChunk(total: Int, limit: Int) -> Action {
        switch phase {
        case .receivingHead, .receivingBody:
            if total > limit {
                phase = .bodyTooLarge
                return .discardBody
            }
            phase = .receivingBody
            return .appendBody
        case .bodyTooLarge:
            return .proceed
        case .dispatched, .suspended, .answerReady, .responded, .aborted:
            return .reject
        }
    }

    /// A call without body bytes after the first: the request arrived whole, or a resumed
    /// connection is back with its answer.
    mutating func requestComplete() -> Action {
        switch phase {
        case .receivingHead:
            phase = .dispatched
            return .answer
        case .receivingBody:
            phase = .dispatched
            return .dispatch
        case .bodyTooLarge:
            phase = .responded
            return .refuseTooLarge
        case .answerReady:
            phase = .responded
            return .sendAnswer
        case .dispatched, .suspended, .responded, .aborted:
            return .reject
        }
    }

    /// The request is refused before it reaches the handler (framing, head or body limits).
    mutating func refused() -> Action {
        switch phase {
        case .receivingHead, .receivingBody, .bodyTooLarge, .answerReady:
            phase = .responded
            return .send
        case .dispatched, .suspended, .responded, .aborted:
            return .reject
        }
    }

    /// The handler (or the fast path) answered at once, on this thread.
    mutating func handlerAnswered() -> Action {
        guard case .dispatched = phase else { return .reject }
        phase = .responded
        return .send
    }

    /// The handler deferred its answer.
    mutating func handlerDeferred() -> Action {
        guard case .dispatched = phase else { return .reject }
        phase = .suspended
        return .suspend
    }

    /// The deferred answer arrived (from any thread, or from shutdown's 503): only the first
    /// answer of a suspended request counts.
    mutating func answerArrived() -> Action {
        guard case .suspended = phase else { return .drop }
        phase = .answerReady
        return .resume
    }

    /// libmicrohttpd finished with the request (`MHD_OPTION_NOTIFY_COMPLETED`): answered, timed
    /// out, or closed by the client. A suspended request loses its place among the suspended.
    mutating func connectionClosed() -> Action {
        defer { phase = .aborted }
        guard case .suspended = phase else { return .proceed }
        return .forget
    }
}
