import HTTPDNSCore
import HTTPDNSLoop
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The plain DNS listener (`dnsListen`, `docs/dns.md`): UDP and TCP on one address, answered
/// for one account through `HTTPDNSService.answerPlainDNS`. Its sockets are served by one
/// epoll loop thread of its own (`PlainDNSLoop`); no libmicrohttpd thread is involved, and no
/// thread waits for an upstream: a miss completes on the engine's threads and its response is
/// handed back to the loop through a queue.
public final class PlainDNSServer: Sendable {
    public struct Options: Sendable {
        public var host: String
        public var port: UInt16
        /// The account every query is answered for.
        public var account: String
        /// Seconds a TCP connection with nothing in flight is kept without a new query.
        public var tcpIdleTimeout: Double = 10
        /// Open TCP connections at most; one accepted beyond is closed at once (counted).
        public var tcpConnectionLimit = 256

        public init(host: String, port: UInt16, account: String) {
            self.host = host
            self.port = port
            self.account = account
        }
    }

    /// A response for the loop to send: to a UDP peer, or on a TCP connection.
    struct Outgoing: Sendable {
        enum Destination: Sendable {
            case udp(PlainDNSSocketAddress)
            case tcp(connection: UInt64)
        }
        var destination: Destination
        /// Empty: no response after all (the connection's query is no longer in flight).
        var message: [UInt8]
    }

    public let options: Options
    public let metrics: PlainDNSMetrics
    let service: HTTPDNSService
    let queue = LoopQueue<Outgoing>(
        services: LoopServices(nameThread: { ThreadName.setCurrent($0) }, report: { PlainDNSServer.report($0) }))
    private let started = Mutex(false)

    /// `metrics` may be shared with the DoT listener (each counts under its own transport).
    public init(options: Options, service: HTTPDNSService, metrics: PlainDNSMetrics = PlainDNSMetrics()) {
        self.options = options
        self.service = service
        self.metrics = metrics
    }

    /// Binds the TCP and the UDP socket (the UDP one to the port TCP got when `port` is 0) and
    /// starts the loop thread. Returns the port.
    public func start() throws(PlainDNSServerError) -> UInt16 {
        let tcp = try PlainDNSSocketAddress.listening(host: options.host, port: options.port, backlog: 128)
        let udp: (fd: Int32, port: UInt16)
        do throws(PlainDNSServerError) {
            udp = try PlainDNSSocketAddress.bound(host: options.host, port: tcp.port, type: SOCK_DGRAM)
        } catch {
            close(tcp.fd)
            throw error
        }
        started.withLock { $0 = true }
        let loop = PlainDNSLoop.Sockets(udp: udp.fd, tcp: tcp.fd)
        queue.startThread(named: "dns-listener") { [self] in
            PlainDNSLoop(server: self, sockets: loop).run()
        }
        return tcp.port
    }

    /// Stops the loop (which closes every socket) and waits for it; a miss that completes later
    /// is dropped. Idempotent; nothing happens when `start` never succeeded.
    public func stop() {
        guard started.withLock({ $0 }) else { return }
        queue.stopAndWait()
    }

    /// Hands a response to the loop (dropped once it is stopping).
    func send(_ outgoing: Outgoing) {
        _ = queue.enqueue(outgoing)
    }

    static func report(_ failure: LoopCall.Failure) {
        EventLoopLog.failure(call: failure.call, "plain DNS: \(failure)")
    }
}

/// A plain DNS listener that could not be started (the address, the bind).
public struct PlainDNSServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
