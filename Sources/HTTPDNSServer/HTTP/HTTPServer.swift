import CMicroHTTPD
import HTTPDNSCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The libmicrohttpd front: an epoll thread pool calling `handler` for each complete request.
/// A handler that returns `.deferred` has its connection suspended (`MHD_suspend_connection`) until
/// it responds, so no pool thread ever waits for an upstream.
public final class HTTPServer: @unchecked Sendable {
    public typealias Handler = @Sendable (HTTPRequest) -> HandlerResult
    /// Tried first on every complete request without a body, on the borrowed request: a 200
    /// (a cache hit), or nil to build the `HTTPRequest` and call the handler (see
    /// `HTTPDNSService.fastResponse`).
    public typealias FastHandler = @Sendable (ConnectionHead) -> FastResponse?

    private let options: HTTPServerOptions
    private let handler: Handler
    private let fastHandler: FastHandler?
    /// The daemon; written by `start` before any request and by `stop` after the last one.
    private var daemon: OpaquePointer?
    /// Requests between their first callback and their completion (striped: every request
    /// adds and subtracts from its HTTP thread).
    private let inFlight = StripedCounter()
    /// `inFlight` as every request reaches it (no retain: `StripedCounter.Unretained`).
    private let inFlightCounter: StripedCounter.Unretained
    /// Requests the fast handler answered (`fastPathAnswers`), counted without a retain.
    private let fastAnswers = StripedCounter()
    private let fastAnswersCounter: StripedCounter.Unretained
    /// Suspended connections by context identity; `nil` once the server stopped resuming.
    private let locked_suspended = Mutex<[ObjectIdentifier: SuspendedConnection]?>([:])
    public let metrics = HTTPMetrics()
    /// Connection limits and the request-read deadline (see `ConnectionTracker`).
    let tracker: ConnectionTracker
    /// Our own request-target and head limits, under libmicrohttpd's buffer.
    private let headLimits: RequestHeadLimits

    /// The GnuTLS priority string of HTTPS listeners: TLS 1.2 and 1.3 only.
    static let tlsPriorities: StaticString = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

    public init(options: HTTPServerOptions, fastHandler: FastHandler? = nil, handler: @escaping Handler) {
        self.options = options
        self.fastHandler = fastHandler
        self.handler = handler
        headLimits = RequestHeadLimits(connectionMemoryLimit: options.connectionMemoryLimit)
        inFlightCounter = StripedCounter.Unretained(inFlight)
        fastAnswersCounter = StripedCounter.Unretained(fastAnswers)
        tracker = ConnectionTracker(
            limits: .init(
                connectionLimit: options.connectionLimit, perAddress: options.perIPConnectionLimit,
                trustedProxies: options.trustedProxies,
                deadline: ReadDeadline(
                    requestReadTimeout: options.requestReadTimeout * 1000, idleTimeout: options.connectionTimeout * 1000),
                keying: options.clientKeying),
            certificates: options.tls)
    }

    /// Connection counters of this listener, for `/metrics`.
    public var connectionStats: (open: Int, rejectedAtLimit: Int, rejectedPerAddress: Int, closedSlow: Int, shed: Int) {
        (tracker.openConnections, tracker.rejectedAtLimit, tracker.rejectedPerAddress, tracker.closedSlow, tracker.shed)
    }

    /// Requests answered by the fast handler (without an `HTTPRequest` or the router), for
    /// `/metrics`: shows which path serves the hits.
    public var fastPathAnswers: UInt64 { fastAnswers.value }

    /// Whether this listener serves HTTPS.
    public var isTLS: Bool { options.tls != nil }

    /// Binds and starts the pool. Returns the bound port (useful with port 0).
    public func start() throws(HTTPServerError) -> UInt16 {
        var flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_TURBO.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ITC.rawValue | MHD_USE_ERROR_LOG.rawValue
        let threads = HTTPServerOptions.workerThreads(configured: options.threads)
        guard let address = IPAddress(options.host) else {
            throw HTTPServerError("listen address '\(options.host)' is not an IP address")
        }
        if address.family == .aaaa { flags |= MHD_USE_IPv6.rawValue }
        if options.tls != nil { flags |= MHD_USE_TLS.rawValue }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let trackerContext = Unmanaged.passUnretained(tracker).toOpaque()
        // libmicrohttpd splits its limit between the pool's threads and stops accepting (leaving
        // connections in the kernel's backlog) when a thread reaches its share: keep every share
        // above our limit, which the accept policy enforces by closing at once.
        let mhdLimit = (options.connectionLimit + 64) * threads
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { raw in
            if address.family == .a {
                var v4 = sockaddr_in()
                v4.sin_family = sa_family_t(AF_INET)
                v4.sin_port = options.port.bigEndian
                address.bytes.withUnsafeBytes { bytes in withUnsafeMutableBytes(of: &v4.sin_addr) { $0.copyMemory(from: bytes) } }
                withUnsafeBytes(of: v4) { raw.copyMemory(from: $0) }
            } else {
                var v6 = sockaddr_in6()
                v6.sin6_family = sa_family_t(AF_INET6)
                v6.sin6_port = options.port.bigEndian
                address.bytes.withUnsafeBytes { bytes in withUnsafeMutableBytes(of: &v6.sin6_addr) { $0.copyMemory(from: bytes) } }
                withUnsafeBytes(of: v6) { raw.copyMemory(from: $0) }
            }
        }
        let started: OpaquePointer? = withUnsafeMutablePointer(to: &storage) { pointer in
            var items: [MHD_OptionItem] = [
                chttpdns_mhd_option_logger(HTTPServer.log),
                chttpdns_mhd_option_value(.CONNECTION_LIMIT, mhdLimit),
                chttpdns_mhd_option_notify_connection(ConnectionTracker.notify, trackerContext),
                chttpdns_mhd_option_uri_log(ConnectionTracker.uriLog, trackerContext),
                chttpdns_mhd_option_value(.CONNECTION_TIMEOUT, options.connectionTimeout),
                chttpdns_mhd_option_value(.CONNECTION_MEMORY_LIMIT, options.connectionMemoryLimit),
                chttpdns_mhd_option_pointer(.SOCK_ADDR, UnsafeMutableRawPointer(pointer)),
                chttpdns_mhd_option_completed(HTTPServer.completed, context),
            ]
            // One thread: the internal polling thread alone (a pool of one draws a warning).
            if threads > 1 { items.append(chttpdns_mhd_option_value(.THREAD_POOL_SIZE, threads)) }
            if options.tls != nil {
                let priorities = UnsafeMutableRawPointer(mutating: UnsafeRawPointer(Self.tlsPriorities.utf8Start))
                items.append(chttpdns_mhd_option_pointer(.HTTPS_PRIORITIES, priorities))
                items.append(chttpdns_mhd_option_cert_callback(TLSCertificateStore.retrieve))
            }
            items.append(chttpdns_mhd_option_value(.END, 0))
            return items.withUnsafeMutableBufferPointer { buffer in
                chttpdns_mhd_start(
                    flags, options.port, ConnectionTracker.acceptPolicy, trackerContext, HTTPServer.access, context,
                    buffer.baseAddress)
            }
        }
        guard let started else {
            throw HTTPServerError("cannot listen on \(options.host):\(options.port) (address in use or not available)")
        }
        daemon = started
        tracker.startReaper()
        return chttpdns_mhd_bound_port(started)
    }

    /// Stops accepting new connections; requests already received go on.
    public func quiesce() {
        guard let daemon else { return }
        let socket = MHD_quiesce_daemon(daemon)
        if socket >= 0 { close(socket) }
    }

    /// Waits up to `grace` seconds for requests in flight, answers what is still suspended with
    /// 503, and stops the pool.
    public func stop(grace: Double) {
        guard let daemon else { return }
        let deadline = SystemClock().now() + grace
        while inFlight.signedValue > 0 && SystemClock().now() < deadline { usleep(10_000) }
        let leftovers = locked_suspended.withLock { table -> [SuspendedConnection] in
            let pending = Array((table ?? [:]).values)
            // Every connection still in the table is resumed here: its own responder may have
            // fulfilled it already and be waiting for this lock, and will then find no entry.
            for connection in pending {
                _ = connection.context.fulfil(APIError(.serviceUnavailable, "the service is shutting down").response)
                MHD_resume_connection(connection.connection)
            }
            table = nil
            return pending
        }
        // Resumed connections (ours above, or answered by their responders just before) need a
        // turn of the event loop to send their response: wait for them, bounded.
        let until = SystemClock().now() + 2
        while inFlight.signedValue > 0 && SystemClock().now() < until { usleep(5_000) }
        if !leftovers.isEmpty { Log.info("answered \(leftovers.count) suspended requests with 503 at shutdown") }
        MHD_stop_daemon(daemon)
        tracker.stopReaper()
        self.daemon = nil
    }

    public var requestsInFlight: Int { inFlight.signedValue }

    // MARK: Callbacks (called by libmicrohttpd worker threads)

    private static let access: MHD_AccessHandlerCallback = { cls, connection, url, method, version, uploadData, uploadDataSize, conCls in
        guard let cls, let connection, let conCls, let uploadDataSize else { return .NO }
        // The server outlives its daemon: no retain and release of it per request.
        return Unmanaged<HTTPServer>.fromOpaque(cls)._withUnsafeGuaranteedRef { server in
            server.handle(
                connection, url: url, method: method, version: version, uploadData: uploadData, uploadDataSize: uploadDataSize,
                conCls: conCls)
        }
    }

    /// What `con_cls` holds for a request that has neither a body nor a deferred answer: most
    /// requests never need a `RequestContext`, so none is allocated for them.
    private static var noContext: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1)! }

    private static let completed: MHD_RequestCompletedCallback = { cls, connection, conCls, _ in
        guard let cls else { return }
        Unmanaged<HTTPServer>.fromOpaque(cls)._withUnsafeGuaranteedRef { server in
            if let connection { server.tracker.requestCompleted(connection) }
            guard let conCls, let raw = conCls.pointee else { return }
            if raw != noContext { Unmanaged<RequestContext>.fromOpaque(raw).release() }
            conCls.pointee = nil
            server.inFlightCounter.add(-1)
        }
    }

    /// libmicrohttpd's own messages (`MHD_OPTION_EXTERNAL_LOGGER`): one line per kind of message
    /// (its format string) every `LibraryLog.interval` seconds at most, with the count of those
    /// held back, so that thousands of aborted connections write a few lines, not thousands.
    private static let log: chttpdns_mhd_log_sink = { format, message in
        guard let format, let message else { return }
        guard let suppressed = libraryLog.admit(String(cString: format), now: SystemClock().now()) else { return }
        var text = String(cString: message)
        while text.hasSuffix("\n") { text.removeLast() }
        let more = suppressed > 0 ? " (\(suppressed) more like it in the last \(Int(libraryLog.interval)) s)" : ""
        Log.warning("libmicrohttpd: \(text)\(more)")
    }

    /// The throttle of `log`, shared by every listener: keys are libmicrohttpd's format strings,
    /// a set fixed by the library, so the table stays small.
    private static let libraryLog = LogThrottle(interval: 10)

    private func handle(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
        uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>,
        conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let raw = conCls.pointee else {
            inFlightCounter.add(1)
            var logged: RequestContext?
            if options.accessLog {
                // The access log needs the start time and the request id: a context for every request.
                let context = RequestContext()
                context.startedAt = AccessLog.now()
                context.requestID = AccessLog.requestID(from: MHD_lookup_connection_value(connection, .HEADER_KIND, "X-Request-Id"))
                conCls.pointee = Unmanaged.passRetained(context).toOpaque()
                logged = context
            } else {
                conCls.pointee = Self.noContext
            }
            // Read only when there is a Content-Length, which requests without a body (every
            // GET) do not carry: one header lookup for them, as before.
            if let length = HTTPRequest.header(connection, "Content-Length") {
                if let refusal = RequestFraming.refusal(transferEncoding: HTTPRequest.header(connection, "Transfer-Encoding")) {
                    return queue(connection, refusal.response, method: method, url: url, context: logged)
                }
                if let length = Int(length), length > options.maxBodyBytes {
                    return queue(connection, payloadTooLarge(), method: method, url: url, context: logged)
                }
            }
            return .YES
        }
        let existing = raw == Self.noContext ? nil : Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        // A call without body bytes after the first completes the request: it arrived whole. A
        // target a NUL cut short (`RawRequestURI`), or a target or head over our limits
        // (`RequestHeadLimits`), is refused, on either path.
        if uploadDataSize.pointee == 0,
            let refusal = tracker.requestReceived(connection, method: method, url: url, version: version, headLimits: headLimits)
        {
            return queue(connection, refusal.response, method: method, url: url, context: existing)
        }
        // No body and not dispatched yet (an access-log context alone does not count).
        if uploadDataSize.pointee == 0 && (existing.map { !$0.dispatched && $0.body.isEmpty && !$0.tooLarge } ?? true) {
            if let url, let method, let response = fastHandler?(ConnectionHead(connection: connection, method: method, url: url)) {
                fastAnswersCounter.increment()
                return queue(connection, fast: response, method: method, url: url, context: existing)
            }
            return dispatch(connection, url: url, method: method, body: [], conCls: conCls, context: existing)
        }
        let context: RequestContext
        if let existing {
            context = existing
        } else {
            context = RequestContext()
            conCls.pointee = Unmanaged.passRetained(context).toOpaque()
        }
        if uploadDataSize.pointee > 0 {
            let size = uploadDataSize.pointee
            if !context.tooLarge, let uploadData {
                if context.body.count + size > options.maxBodyBytes {
                    context.tooLarge = true
                    context.body = []
                } else {
                    uploadData.withMemoryRebound(to: UInt8.self, capacity: size) {
                        context.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size))
                    }
                }
            }
            uploadDataSize.pointee = 0
            return .YES
        }
        if let response = context.takeResponse() { return queue(connection, response, method: method, url: url, context: context) }
        if context.tooLarge { return queue(connection, payloadTooLarge(), method: method, url: url, context: context) }
        return dispatch(connection, url: url, method: method, body: context.body, conCls: conCls, context: context)
    }

    /// Builds the request, runs the handler and queues its response, or suspends the connection
    /// for a deferred one (creating the connection's `RequestContext` then if it has none).
    private func dispatch(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, body: [UInt8],
        conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>, context existing: RequestContext?
    ) -> MHD_Result {
        let request = HTTPRequest(
            connection: connection, method: method.map { String(cString: $0) } ?? "GET", path: url.map { String(cString: $0) } ?? "/",
            body: body, listener: options.listener)
        existing?.dispatched = true
        switch handler(request) {
        case .response(let response):
            return queue(connection, response, method: method, url: url, context: existing)
        case .deferred(let start):
            let context: RequestContext
            if let existing {
                context = existing
            } else {
                context = RequestContext()
                conCls.pointee = Unmanaged.passRetained(context).toOpaque()
            }
            // Suspend first, then start: the responder may run at once on another thread, and a
            // resume must never precede its suspend.
            let suspended = SuspendedConnection(connection: connection, context: context)
            let key = ObjectIdentifier(context)
            let registered = locked_suspended.withLock { table -> Bool in
                guard table != nil else { return false }
                MHD_suspend_connection(connection)
                table![key] = suspended
                return true
            }
            context.dispatched = true
            guard registered else {
                return queue(
                    connection, APIError(.serviceUnavailable, "the service is shutting down").response, method: method, url: url,
                    context: context)
            }
            start { [self] response in
                guard context.fulfil(response) else { return }
                locked_suspended.withLock { table in
                    guard table?.removeValue(forKey: key) != nil else { return }
                    MHD_resume_connection(suspended.connection)
                }
            }
            return .YES
        }
    }

    private func payloadTooLarge() -> HTTPResponse {
        APIError(.payloadTooLarge, "request body larger than \(options.maxBodyBytes) bytes").response
    }

    /// Queues `response`; with the access log on (`context` holds its start and id), adds
    /// `X-Request-Id` and writes the request's line.
    private func queue(
        _ connection: OpaquePointer, _ response: HTTPResponse, method: UnsafePointer<CChar>?, url: UnsafePointer<CChar>?,
        context: RequestContext?
    ) -> MHD_Result {
        var response = response
        if let context, let id = context.requestID {
            response.headers.append(("X-Request-Id", id))
            AccessLog.write(
                connection, method: method, path: url, status: response.status, bytes: response.body.count, context: context,
                account: response.logAccount, source: response.source?.rawValue)
        }
        return queue(connection, response)
    }

    private func queue(_ connection: OpaquePointer, _ response: HTTPResponse) -> MHD_Result {
        metrics.record(status: response.status, endpoint: response.endpoint)
        let mhdResponse = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return .NO }
        var added = Self.addContentType(mhdResponse, response.contentType)
        for (name, value) in response.headers where added { added = Self.addHeader(mhdResponse, name, value) }
        let result = added ? MHD_queue_response(connection, UInt32(response.status), mhdResponse) : .NO
        MHD_destroy_response(mhdResponse)
        return result
    }

    /// A fast-path response: its memory goes to libmicrohttpd, which frees it once sent. The
    /// fast path answers cache hits only (`HTTPDNSService.fastResponse`), a 200 in the format of
    /// its route.
    private func queue(
        _ connection: OpaquePointer, fast response: consuming FastResponse, method: UnsafePointer<CChar>?, url: UnsafePointer<CChar>?,
        context: RequestContext?
    ) -> MHD_Result {
        metrics.recordFastHit(endpoint: response.endpoint)
        let count = response.count
        let contentType = response.contentType, maxAge = response.maxAge
        let account = response.account, source = response.source
        let body = response.take()
        guard let mhdResponse = MHD_create_response_from_buffer(count, body, .RESPMEM_MUST_FREE) else {
            free(body)
            return .NO
        }
        var added = Self.addContentType(mhdResponse, contentType)
        if added, let maxAge {
            added = CacheControl.withValue(maxAge: maxAge) { Self.addHeader(mhdResponse, Self.cString(CacheControl.name), $0) }
        }
        if added, let context, let id = context.requestID {
            added = Self.addHeader(mhdResponse, "X-Request-Id", id)
            AccessLog.write(
                connection, method: method, path: url, status: 200, bytes: count, context: context,
                account: String(decoding: account, as: UTF8.self), source: source.rawValue)
        }
        let result = added ? MHD_queue_response(connection, UInt32(MHD_HTTP_OK), mhdResponse) : .NO
        MHD_destroy_response(mhdResponse)
        return result
    }

    /// `Content-Type: type` (nil: JSON, as a fast response says it), both paths' one writer of
    /// it. JSON, the usual case, from static C strings: a Swift string passed as `const char *`
    /// is copied into a new array on every call when it is short (12 bytes here).
    private static func addContentType(_ response: OpaquePointer, _ type: String?) -> Bool {
        guard let type, type != HTTPResponse.jsonType else {
            return addHeader(response, cString("Content-Type"), cString(HTTPResponse.jsonTypeLiteral))
        }
        return addHeader(response, "Content-Type", type)
    }

    /// `MHD_add_response_header` (which copies both), the one place its result is checked: false
    /// when libmicrohttpd refused the header (a name or value it does not send, such as one with
    /// a line break, or no memory), logged; the response is then not queued and
    /// libmicrohttpd closes the connection. A header with an empty value is left out: HTTP allows
    /// one, libmicrohttpd 0.9.75 refuses it (it was always left out; `HTTPServerTests`' echo
    /// handler sends one).
    private static func addHeader(_ response: OpaquePointer, _ name: UnsafePointer<CChar>, _ value: UnsafePointer<CChar>) -> Bool {
        guard value.pointee != 0 else { return true }
        guard MHD_add_response_header(response, name, value) == .YES else {
            Log.error("HTTP: libmicrohttpd refused the response header '\(Log.escaped(String(cString: name)))'; the connection is closed")
            return false
        }
        return true
    }

    /// The same for Swift strings, through `withCString`: a short string passed as `const char *`
    /// would be copied into a new array first.
    private static func addHeader(_ response: OpaquePointer, _ name: String, _ value: String) -> Bool {
        name.withCString { name in value.withCString { value in addHeader(response, name, value) } }
    }

    private static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}

/// The HTTP front could not start.
public struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
