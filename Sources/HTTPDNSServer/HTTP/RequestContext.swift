import CMicroHTTPD
import Synchronization

/// Per-request state kept in libmicrohttpd's `con_cls` between calls of the access handler, for
/// a request that needs more than its head: a body, a deferred answer, or the access log. Most
/// requests need none of these and get no context (`HTTPServer.headOnly`).
/// `body` is touched only by the connection's own MHD thread; `state` also by the thread that
/// delivers a deferred answer, hence its lock.
final class RequestContext: @unchecked Sendable {
    var body: [UInt8] = []
    /// The access log's: when the request's first callback came (`AccessLog.now`) and its id.
    var startedAt: Double = 0
    var requestID: String?
    /// The state, and the deferred answer once it arrived (until the resumed call takes it).
    private let locked_state: Mutex<(state: RequestState, answer: HTTPResponse?)>

    init(_ state: RequestState = RequestState()) { locked_state = Mutex((state, nil)) }

    /// Applies one event to the request's state, under its lock, and returns the action to
    /// perform (outside the lock).
    func advance(_ event: (inout RequestState) -> RequestState.Action) -> RequestState.Action {
        locked_state.withLock { event(&$0.state) }
    }

    /// Applies the arrival of the deferred answer, keeping `response` when the state says so
    /// (`.resume`); a late or second answer is dropped.
    func answerArrived(_ response: consuming HTTPResponse) -> RequestState.Action {
        var response = Optional(response)
        return locked_state.withLock { locked in
            let action = locked.state.answerArrived()
            if action == .resume { locked.answer = response.take() }
            return action
        }
    }

    /// The answer kept by `answerArrived`, once.
    func takeAnswer() -> HTTPResponse? {
        locked_state.withLock { $0.answer.take() }
    }
}

/// A suspended connection, as the thread that resumes it holds it. The pointer is only used to
/// call `MHD_resume_connection`, under the server's lock that `stop` takes before the daemon dies.
struct SuspendedConnection: @unchecked Sendable {
    let connection: OpaquePointer
    let context: RequestContext
    /// The HTTP thread whose daemon has the connection: told when it is resumed.
    let loop: HTTPLoop

    /// Resumes the connection and has its thread run the daemon to answer it.
    func resume() {
        MHD_resume_connection(connection)
        loop.connectionResumed()
    }
}
