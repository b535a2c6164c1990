import CMicroHTTPD
import HTTPDNSCore
import HTTPDNSLoop
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The libmicrohttpd front: HTTP threads (`HTTPLoop`, one daemon each) calling `handler` for each
/// complete request. A handler that returns `.deferred` has its connection suspended
/// (`MHD_suspend_connection`) until it responds, so no HTTP thread ever waits for an upstream.
public final class HTTPServer: @unchecked Sendable {
    public typealias Handler = @Sendable (consuming HTTPRequest) -> HandlerResult
    /// Tried first on every complete request without a body, on the borrowed request: a 200
    /// (a cache hit), the lookup of a name the cache missed, or nil to build the `HTTPRequest`
    /// and call the handler (see `HTTPDNSService.fastPath`).
    public typealias FastHandler = @Sendable (ConnectionHead) -> FastResult?

    let options: HTTPServerOptions
    let handler: Handler
    let fastHandler: FastHandler?
    /// The HTTP threads, one daemon each; written by `start` before any request and by `stop`
    /// after the last one.
    private(set) var loops: [HTTPLoop] = []
    /// Whether `quiesce()` closed the listening socket.
    private var quiesced = false
    /// Requests between their first callback and their completion (striped: every request
    /// adds and subtracts from its HTTP thread).
    private let inFlight = StripedCounter()
    /// `inFlight` as every request reaches it (no retain: `StripedCounter.Unretained`).
    let inFlightCounter: StripedCounter.Unretained
    /// Requests the fast handler answered (`fastPathAnswers`), counted without a retain.
    private let fastAnswers = StripedCounter()
    let fastAnswersCounter: StripedCounter.Unretained
    public let metrics = HTTPMetrics()
    /// Connection limits and the request-read deadline (see `ConnectionTracker`).
    let tracker: ConnectionTracker
    /// Our own request-target and head limits, under libmicrohttpd's buffer.
    let headLimits: RequestHeadLimits

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

    /// Binds and starts the HTTP threads. Returns the bound port (useful with port 0).
    ///
    /// Each thread runs its own daemon (`HTTPLoop`); the first binds the listening socket and the
    /// others accept from the same socket, as libmicrohttpd's own pool threads do.
    public func start() throws(HTTPServerError) -> UInt16 {
        guard let address = IPAddress(options.host) else {
            throw HTTPServerError("listen address '\(options.host)' is not an IP address")
        }
        let threads = HTTPServerOptions.workerThreads(configured: options.threads)
        var started: [OpaquePointer] = []
        for index in 0..<threads {
            let shared = started.first.map { chttpdns_mhd_listen_fd($0) }
            guard let daemon = startDaemon(address, listenSocket: shared) else {
                stopDaemons(started)
                throw HTTPServerError("cannot listen on \(options.host):\(options.port) (address in use or not available)")
            }
            started.append(daemon)
            if index == 0 {
                do throws(LoopCall.Failure) {
                    // The daemons share one listening socket: a blocking one would hold a thread in
                    // `accept` when another took the connection first.
                    try LoopCall.makeNonBlocking(chttpdns_mhd_listen_fd(daemon))
                } catch {
                    stopDaemons(started)
                    throw HTTPServerError("cannot listen on \(options.host):\(options.port): \(error)")
                }
            }
        }
        loops = started.map { HTTPLoop(daemon: $0, makeGuest: options.loopGuest) }
        for loop in loops { loop.start(named: "httpdnsd-http") }
        tracker.startReaper()
        return chttpdns_mhd_bound_port(started[0])
    }

    /// Starts one daemon in external polling mode: bound to `address`, or accepting from
    /// `listenSocket` (the first daemon's) when given. nil when libmicrohttpd refused.
    private func startDaemon(_ address: IPAddress, listenSocket: Int32?) -> OpaquePointer? {
        var flags =
            MHD_USE_EPOLL.rawValue | MHD_USE_TURBO.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ITC.rawValue
            | MHD_USE_ERROR_LOG.rawValue
        if address.family == .aaaa { flags |= MHD_USE_IPv6.rawValue }
        if options.tls != nil { flags |= MHD_USE_TLS.rawValue }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let trackerContext = Unmanaged.passUnretained(tracker).toOpaque()
        // libmicrohttpd stops accepting (leaving connections in the kernel's backlog) when a
        // daemon reaches its limit: keep every daemon's above ours, which the accept policy
        // enforces by closing at once.
        let mhdLimit = options.connectionLimit + 64
        var storage = Self.socketAddress(address, port: options.port)
        return withUnsafeMutablePointer(to: &storage) { pointer in
            var items: [MHD_OptionItem] = [
                chttpdns_mhd_option_logger(HTTPServer.log),
                chttpdns_mhd_option_value(.CONNECTION_LIMIT, mhdLimit),
                chttpdns_mhd_option_notify_connection(ConnectionTracker.notify, trackerContext),
                chttpdns_mhd_option_uri_log(ConnectionTracker.uriLog, trackerContext),
                chttpdns_mhd_option_value(.CONNECTION_TIMEOUT, options.connectionTimeout),
                chttpdns_mhd_option_value(.CONNECTION_MEMORY_LIMIT, options.connectionMemoryLimit),
                chttpdns_mhd_option_completed(HTTPServer.completed, context),
            ]
            if let listenSocket {
                items.append(chttpdns_mhd_option_value(.LISTEN_SOCKET, Int(listenSocket)))
            } else {
                items.append(chttpdns_mhd_option_pointer(.SOCK_ADDR, UnsafeMutableRawPointer(pointer)))
            }
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
    }

    /// `address` and `port` as a `sockaddr_in` or `sockaddr_in6`.
    private static func socketAddress(_ address: IPAddress, port: UInt16) -> sockaddr_storage {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { raw in
            if address.family == .a {
                var v4 = sockaddr_in()
                v4.sin_family = sa_family_t(AF_INET)
                v4.sin_port = port.bigEndian
                address.bytes.withUnsafeBytes { bytes in withUnsafeMutableBytes(of: &v4.sin_addr) { $0.copyMemory(from: bytes) } }
                withUnsafeBytes(of: v4) { raw.copyMemory(from: $0) }
            } else {
                var v6 = sockaddr_in6()
                v6.sin6_family = sa_family_t(AF_INET6)
                v6.sin6_port = port.bigEndian
                address.bytes.withUnsafeBytes { bytes in withUnsafeMutableBytes(of: &v6.sin6_addr) { $0.copyMemory(from: bytes) } }
                withUnsafeBytes(of: v6) { raw.copyMemory(from: $0) }
            }
        }
        return storage
    }

    /// Stops daemons no thread runs any more. Every daemon but the first was given the first's
    /// listening socket: quiesced first, it leaves that socket to the first to close (or, after
    /// `quiesce()`, to nobody: it is closed already).
    private func stopDaemons(_ daemons: [OpaquePointer]) {
        for daemon in daemons.dropFirst() { _ = MHD_quiesce_daemon(daemon) }
        for daemon in daemons { MHD_stop_daemon(daemon) }
    }

    /// Stops accepting new connections; requests already received go on. Each thread quiesces
    /// its own daemon; the listening socket is then closed, so new connections are refused.
    public func quiesce() {
        guard let first = loops.first, !quiesced else { return }
        let listening = chttpdns_mhd_listen_fd(first.daemon)
        for loop in loops { loop.quiesce() }
        quiesced = true
        if listening >= 0 { close(listening) }
    }

    /// Waits up to `grace` seconds for requests in flight, answers what is still suspended with
    /// 503, and stops the threads and their daemons.
    public func stop(grace: Double) {
        guard !loops.isEmpty else { return }
        let deadline = SystemClock().now() + grace
        while inFlight.signedValue > 0 && SystemClock().now() < deadline { usleep(10_000) }
        let leftovers = loops.flatMap { loop in
            loop.locked_suspended.withLock { table -> [SuspendedConnection] in
                let pending = Array((table ?? [:]).values)
                // Every connection still in the table is resumed here: its own responder may have
                // delivered its answer already and be waiting for this lock, and will then find no
                // entry.
                for connection in pending {
                    _ = connection.context.answerArrived(Self.shuttingDown)
                    connection.resume()
                }
                table = nil
                return pending
            }
        }
        // Resumed connections (ours above, or answered by their responders just before) need a
        // turn of their thread's loop to send their response: wait for them, bounded.
        let until = SystemClock().now() + 2
        while inFlight.signedValue > 0 && SystemClock().now() < until { usleep(5_000) }
        if !leftovers.isEmpty { Log.info("answered \(leftovers.count) suspended requests with 503 at shutdown") }
        for loop in loops { loop.stop() }
        stopDaemons(loops.map(\.daemon))
        tracker.stopReaper()
        loops = []
    }

    public var requestsInFlight: Int { inFlight.signedValue }

    /// The HTTP thread whose daemon has `connection` (a few threads: a look through them).
    func loop(of connection: OpaquePointer) -> HTTPLoop? {
        guard let daemon = chttpdns_mhd_connection_daemon(connection) else { return nil }
        return loops.first { $0.daemon == daemon }
    }

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

    private static let completed: MHD_RequestCompletedCallback = { cls, connection, conCls, _ in
        guard let cls else { return }
        Unmanaged<HTTPServer>.fromOpaque(cls)._withUnsafeGuaranteedRef { server in
            if let connection { server.tracker.requestCompleted(connection) }
            guard let conCls, let raw = conCls.pointee else { return }
            if raw != headOnly { server.closed(Unmanaged<RequestContext>.fromOpaque(raw).takeRetainedValue()) }
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
}

/// The HTTP front could not start.
public struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
