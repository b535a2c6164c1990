import CMicroHTTPD
import Synchronization

/// Per-request state kept in libmicrohttpd's `con_cls` between calls of the access handler.
/// `body`/`tooLarge` are touched only by the connection's own MHD thread; the pending response
/// is handed over from the thread that finished a deferred request.
final class RequestContext: @unchecked Sendable {
    var body: [UInt8] = []
    var tooLarge = false
    /// The access log's: when the request's first callback came (`AccessLog.now`), its id,
    /// and whether it went to the handler already (a deferred one is resumed with its answer).
    var startedAt: Double = 0
    var requestID: String?
    var dispatched = false
    private let locked_response = Mutex<HTTPResponse?>(nil)
    private let locked_answered = Atomic<Bool>(false)

    /// Stores the response of a deferred request. Returns false if one was stored already.
    func fulfil(_ response: HTTPResponse) -> Bool {
        guard locked_answered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return false
        }
        locked_response.withLock { $0 = response }
        return true
    }

    /// The stored response, once (after the connection was resumed).
    func takeResponse() -> HTTPResponse? {
        locked_response.withLock { response in
            defer { response = nil }
            return response
        }
    }
}

/// A suspended connection, as the thread that resumes it holds it. The pointer is only used to
/// call `MHD_resume_connection`, under the server's lock that `stop` takes before the daemon dies.
struct SuspendedConnection: @unchecked Sendable {
    let connection: OpaquePointer
    let context: RequestContext
}
