import CMicroHTTPD

/// The access handler's work for one call: it reads the request's state from `con_cls`, applies
/// the call's event (`RequestState`) and performs the action that comes back.
///
/// `con_cls` holds nil before the first call, `headOnly` for a request that needs no
/// `RequestContext` (no body, no deferred answer, no access log: every cache hit), whose phase
/// is then `.receivingHead` until the call that answers it, or a retained `RequestContext`
/// that keeps the phase, the body and the access log's fields.
extension HTTPServer {
    /// The `con_cls` of a request without a `RequestContext`, in `.receivingHead`: no
    /// allocation for the requests that need nothing more.
    static var headOnly: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1)! }

    /// The answer to requests that wait for a deferred answer when the server stops.
    static var shuttingDown: HTTPResponse { APIError(.serviceUnavailable, "the service is shutting down").response }

    func handle(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
        uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>,
        conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let raw = conCls.pointee else { return begin(connection, url: url, method: method, conCls: conCls) }
        let existing = raw == Self.headOnly ? nil : Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        let size = uploadDataSize.pointee
        if size > 0 {
            uploadDataSize.pointee = 0
            return receive(uploadData, size: size, context: existing ?? attachContext(conCls, RequestState()))
        }
        // Without a context the phase is `.receivingHead`; it lives here for this call.
        var local = RequestState()
        // A call without body bytes after the first completes the request: it arrived whole. A
        // target a NUL cut short (`RawRequestURI`), or a target or head over our limits
        // (`RequestHeadLimits`), is refused, on either path.
        if let refusal = tracker.requestReceived(connection, method: method, url: url, version: version, headLimits: headLimits) {
            guard advance(existing, &local, { $0.refused() }) == .send else { return .NO }
            return queue(connection, refusal.response, method: method, url: url, context: existing)
        }
        switch advance(existing, &local, { $0.requestComplete() }) {
        case .answer:
            if let url, let method,
                let result = fastHandler?(ConnectionHead(connection: connection, method: method, url: url, requestID: existing?.requestID))
            {
                fastAnswersCounter.increment()
                switch consume result {
                case .answer(let response):
                    guard advance(existing, &local, { $0.handlerAnswered() }) == .send else { return .NO }
                    return queue(connection, fast: response, method: method, url: url, context: existing)
                case .lookup(let lookup):
                    return deliver(lookup, connection, url: url, method: method, conCls: conCls, context: existing, state: local)
                }
            }
            return dispatch(
                connection, url: url, method: method, body: [], conCls: conCls, context: existing, state: local,
                fastPathDeclined: fastHandler != nil && url != nil && method != nil)
        case .dispatch:
            let body = existing?.body ?? []
            return dispatch(connection, url: url, method: method, body: body, conCls: conCls, context: existing, state: local)
        case .refuseTooLarge:
            return queue(connection, payloadTooLarge(), method: method, url: url, context: existing)
        case .sendAnswer:
            guard let response = existing?.takeAnswer() else { return .NO }
            return queue(connection, response, method: method, url: url, context: existing)
        default:
            return .NO
        }
    }

    /// The first call: the head arrived. Counts the request, creates its context when the access
    /// log needs one, and refuses a body whose framing or announced length is refused.
    private func begin(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        inFlightCounter.add(1)
        var logged: RequestContext?
        if options.accessLog {
            // The access log needs the start time and the request id: a context for every request.
            let context = attachContext(conCls, RequestState())
            context.startedAt = AccessLog.now()
            context.requestID = AccessLog.requestID(from: MHD_lookup_connection_value(connection, .HEADER_KIND, "X-Request-Id"))
            logged = context
        } else {
            conCls.pointee = Self.headOnly
        }
        // Read only when there is a Content-Length, which requests without a body (every
        // GET) do not carry: one header lookup for them.
        guard let length = HTTPRequest.header(connection, "Content-Length") else { return .YES }
        var refusal: HTTPResponse?
        if let framing = RequestFraming.refusal(transferEncoding: HTTPRequest.header(connection, "Transfer-Encoding")) {
            refusal = framing.response
        } else if let length = Int(length), length > options.maxBodyBytes {
            refusal = payloadTooLarge()
        }
        guard let refusal else { return .YES }
        var local = RequestState()
        guard advance(logged, &local, { $0.refused() }) == .send else { return .NO }
        return queue(connection, refusal, method: method, url: url, context: logged)
    }

    /// A body chunk: kept, or dropped with what came before once the body is over the limit.
    private func receive(_ data: UnsafePointer<CChar>?, size: Int, context: RequestContext) -> MHD_Result {
        switch context.advance({ $0.bodyChunk(total: context.body.count + size, limit: options.maxBodyBytes) }) {
        case .appendBody:
            guard let data else { return .YES }
            data.withMemoryRebound(to: UInt8.self, capacity: size) {
                context.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size))
            }
            return .YES
        case .discardBody:
            context.body = []
            return .YES
        case .proceed:
            return .YES
        default:
            return .NO
        }
    }

    /// Builds the request, runs the handler and delivers its result. `fastPathDeclined`: the fast
    /// handler read this request and left it (`HTTPRequest.fastPathDeclined`).
    private func dispatch(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, body: [UInt8],
        conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>, context existing: RequestContext?, state: RequestState,
        fastPathDeclined: Bool = false
    ) -> MHD_Result {
        let request = HTTPRequest(
            connection: connection, method: method.map { String(cString: $0) } ?? "GET", path: url.map { String(cString: $0) } ?? "/",
            body: body, listener: options.listener, isTLS: options.tls != nil, requestID: existing?.requestID,
            fastPathDeclined: fastPathDeclined)
        return deliver(handler(consume request), connection, url: url, method: method, conCls: conCls, context: existing, state: state)
    }

    /// Queues a handler's response, or suspends the connection for its deferred one (creating
    /// the connection's `RequestContext` then if it has none, in the phase `state` the request
    /// reached without one).
    private func deliver(
        _ result: HandlerResult, _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>, context existing: RequestContext?, state: RequestState
    ) -> MHD_Result {
        switch result {
        case .response(let response):
            var local = state
            guard advance(existing, &local, { $0.handlerAnswered() }) == .send else { return .NO }
            return queue(connection, response, method: method, url: url, context: existing)
        case .deferred(let start):
            let context = existing ?? attachContext(conCls, state)
            return suspend(connection, url: url, method: method, context: context, start: start)
        }
    }

    /// Suspends the connection, then starts the deferred work: the responder may run at once on
    /// another thread, and a resume must never precede its suspend. Once the server stopped
    /// resuming, the request is answered 503 at once instead.
    private func suspend(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, context: RequestContext,
        start: @Sendable (_ respond: @escaping @Sendable (consuming HTTPResponse) -> Void) -> Void
    ) -> MHD_Result {
        let key = ObjectIdentifier(context)
        // Only a server that stopped has no thread running the connection's daemon.
        let loop = loop(of: connection)
        let action = loop?.locked_suspended.withLock { table -> RequestState.Action? in
            guard table != nil, let loop else { return nil }
            let action = context.advance { $0.handlerDeferred() }
            guard case .suspend = action else { return action }
            MHD_suspend_connection(connection)
            table![key] = SuspendedConnection(connection: connection, context: context, loop: loop)
            return action
        }
        switch action {
        case nil:
            guard context.advance({ $0.handlerAnswered() }) == .send else { return .NO }
            return queue(connection, Self.shuttingDown, method: method, url: url, context: context)
        case .suspend?:
            start { [loop] response in
                guard context.answerArrived(response) == .resume else { return }
                loop?.locked_suspended.withLock { table in table?.removeValue(forKey: key)?.resume() }
            }
            return .YES
        default:
            return .NO
        }
    }

    /// libmicrohttpd is done with a request that had a context (`context` is released after
    /// this): a request still suspended leaves the table of those to resume.
    func closed(_ context: RequestContext) {
        guard context.advance({ $0.connectionClosed() }) == .forget else { return }
        let key = ObjectIdentifier(context)
        for loop in loops {
            if loop.locked_suspended.withLock({ $0?.removeValue(forKey: key) }) != nil { return }
        }
    }

    /// Creates the request's context in `state` and hands a retain of it to `con_cls`.
    private func attachContext(_ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ state: RequestState) -> RequestContext {
        let context = RequestContext(state)
        conCls.pointee = Unmanaged.passRetained(context).toOpaque()
        return context
    }

    /// Applies `event` to the context's state, or to `local` for a request without a context.
    @inline(__always)
    private func advance(
        _ context: RequestContext?, _ local: inout RequestState, _ event: (inout RequestState) -> RequestState.Action
    ) -> RequestState.Action {
        if let context { return context.advance(event) }
        return event(&local)
    }

    private func payloadTooLarge() -> HTTPResponse {
        APIError(.payloadTooLarge, "request body larger than \(options.maxBodyBytes) bytes").response
    }
}
