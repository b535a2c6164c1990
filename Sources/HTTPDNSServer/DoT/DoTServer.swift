import HTTPDNSCore
import HTTPDNSLoop
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The DNS over TLS listener (`dotListen`, RFC 7858, `docs/dot.md`): TLS 1.2 and 1.3 with the
/// service's certificate (`TLSCertificateStore`, so SIGHUP and file changes rotate it), the
/// two-byte framing of DNS over TCP inside (RFC 7766), each connection answered for the account
/// its TLS server name gives (`DoTAccountName`) through `HTTPDNSService.answerPlainDNS`. Its
/// sockets are served by one epoll loop thread of its own (`DoTLoop`), which never waits: a miss
/// completes on the engine's threads and its response comes back through a queue.
public final class DoTServer: Sendable {
    public struct Options: Sendable {
        public var host: String
        public var port: UInt16
        /// `dotAccountDomain`: `<account>.<domain>` as server name selects the account.
        public var accountDomain: String?
        /// Seconds a connection with nothing in flight is kept without a new query.
        public var idleTimeout: Double = 30
        /// Seconds for the handshake and first query, and for the rest of a query once its
        /// first bytes came (0: no such deadline).
        public var readTimeout: Double = 10
        /// Open connections at most, and per client (`keying`; 0: no per-client limit).
        public var connectionLimit = 4096
        public var perAddressLimit = 64
        public var keying = ClientKeying()
        /// One access-log line per answered query (`accessLog`), protocol `dot`.
        public var accessLog = false

        public init(host: String, port: UInt16, accountDomain: String?) {
            self.host = host
            self.port = port
            self.accountDomain = accountDomain
        }

        var timeouts: DoTTimeouts {
            DoTTimeouts(idleTimeout: Int(idleTimeout * 1000), readTimeout: Int(readTimeout * 1000))
        }
    }

    /// A response for the loop to write on a connection (empty: none after all).
    struct Outgoing: Sendable {
        var connection: UInt64
        var message: [UInt8]
    }

    public let options: Options
    public let metrics = DoTMetrics()
    /// Queries, malformed messages and rate refusals, under `protocol="dot"`.
    let dnsMetrics: PlainDNSMetrics
    let service: HTTPDNSService
    let context: TLSContext
    let queue = LoopQueue<Outgoing>(
        services: LoopServices(nameThread: { ThreadName.setCurrent($0) }, report: { DoTServer.report($0) }))
    private let started = Mutex(false)

    /// `dnsMetrics` may be shared with the plain DNS listener.
    public init(
        options: Options, service: HTTPDNSService, certificates: TLSCertificateStore, dnsMetrics: PlainDNSMetrics
    ) throws(DoTServerError) {
        self.options = options
        self.service = service
        self.dnsMetrics = dnsMetrics
        context = try TLSContext(store: certificates)
    }

    /// Binds and listens, and starts the loop thread. Returns the port.
    public func start() throws(DoTServerError) -> UInt16 {
        let socket: (fd: Int32, port: UInt16)
        do throws(PlainDNSServerError) {
            socket = try PlainDNSSocketAddress.listening(host: options.host, port: options.port, backlog: 511)
        } catch {
            throw DoTServerError(error.description)
        }
        started.withLock { $0 = true }
        let listening = socket.fd
        queue.startThread(named: "dot-listener") { [self] in
            DoTLoop(server: self, listening: listening).run()
        }
        return socket.port
    }

    /// Stops the loop (which closes every socket) and waits for it; a miss that completes later
    /// is dropped. Idempotent; nothing happens when `start` never succeeded.
    public func stop() {
        guard started.withLock({ $0 }) else { return }
        queue.stopAndWait()
    }

    func send(_ outgoing: Outgoing) {
        _ = queue.enqueue(outgoing)
    }

    static func report(_ failure: LoopCall.Failure) {
        EventLoopLog.failure(call: failure.call, "DoT: \(failure)")
    }
}

/// A DoT listener that could not be made or started (TLS setup, the address, the bind).
public struct DoTServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension DoTServer {
    /// The account of a connection whose server name names none.
    public static let defaultAccount = DoTAccountName.fallback
}
