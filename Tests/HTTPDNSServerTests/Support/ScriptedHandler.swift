import Foundation
import HTTPDNSServer
import Synchronization

/// A handler for `HTTPServer` tests with one behaviour per path, recording what it was given.
///
/// - `/text`: 200 `text/plain` "hello"; `/empty`: 200 with an empty body
/// - `/echo`: 200 with the request body, and `X-Method`, `X-Length`, `X-Query` headers
/// - `/later`: deferred; another thread answers 200 "later" after `laterDelay` seconds
/// - `/instant`: deferred, but the responder is called inside `start`
/// - `/twice`: deferred; two threads race to respond ("first" / "second")
/// - `/hold`: deferred; the responder is kept and never called by the handler
/// - anything else: 404 NotFound
final class ScriptedHandler: Sendable {
    let laterDelay: Double
    private let requests = Mutex<[HTTPRequest]>([])
    private let responders = Mutex<[@Sendable (ServerResponse) -> Void]>([])

    init(laterDelay: Double = 0.2) {
        self.laterDelay = laterDelay
    }

    /// Requests received so far, in order.
    var received: [HTTPRequest] { requests.withLock { $0 } }

    /// Responders of `/hold` requests.
    var heldResponders: [@Sendable (ServerResponse) -> Void] { responders.withLock { $0 } }

    func handle(_ request: HTTPRequest) -> HandlerResult {
        requests.withLock { $0.append(request) }
        switch request.path {
        case "/text":
            return .response(ServerResponse(status: 200, contentType: "text/plain; charset=utf-8", body: Array("hello".utf8)))
        case "/empty":
            return .response(ServerResponse(status: 200, body: []))
        case "/echo":
            return .response(
                ServerResponse(
                    status: 200, contentType: "application/octet-stream",
                    headers: [
                        ("X-Method", request.method), ("X-Length", String(request.body.count)), ("X-Query", request.query["q"] ?? ""),
                    ],
                    body: request.body))
        case "/header-empty":
            return .response(
                ServerResponse(status: 200, contentType: "text/plain; charset=utf-8", headers: [("X-Value", "")], body: Array("empty".utf8))
            )
        case "/header-line-break":
            // libmicrohttpd refuses a header value with a line break (here, an injected header).
            return .response(
                ServerResponse(
                    status: 200, contentType: "text/plain; charset=utf-8", headers: [("X-Value", "a\r\nX-Injected: 1")],
                    body: Array("line break".utf8)))
        case "/later":
            return .deferred { [self] respond in
                let thread = Thread { [self] in
                    usleep(UInt32(laterDelay * 1_000_000))
                    respond(ServerResponse(status: 200, contentType: "text/plain; charset=utf-8", body: Array("later".utf8)))
                }
                thread.start()
            }
        case "/instant":
            return .deferred { respond in
                respond(ServerResponse(status: 200, contentType: "text/plain; charset=utf-8", body: Array("instant".utf8)))
            }
        case "/twice":
            return .deferred { respond in
                let threads = ["first", "second"].map { text in
                    Thread { respond(ServerResponse(status: 200, contentType: "text/plain; charset=utf-8", body: Array(text.utf8))) }
                }
                for thread in threads { thread.start() }
            }
        case "/hold":
            return .deferred { [self] respond in responders.withLock { $0.append(respond) } }
        default:
            return .response(APIError(.notFound, "no such endpoint: \(request.path)").response)
        }
    }
}
