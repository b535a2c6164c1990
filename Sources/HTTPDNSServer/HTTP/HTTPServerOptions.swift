import HTTPDNSCore
import HTTPDNSLoop

#if canImport(Glibc)
    import Glibc
#endif

/// Listener and limits of the HTTP front.
public struct HTTPServerOptions: Sendable {
    public var host: String
    public var port: UInt16
    /// HTTP threads (each runs its own daemon and event loop); 0 means one per core.
    public var threads: Int
    /// Open connections at most; beyond it a new connection is closed at once (see
    /// `ConnectionTracker`), never left waiting in the kernel's backlog.
    public var connectionLimit: Int
    /// Open connections per peer address; 0 means no per-address limit. Peers in
    /// `trustedProxies` are exempt (they carry many clients).
    public var perIPConnectionLimit: Int
    /// Idle connection timeout in seconds (libmicrohttpd's: any byte received restarts it).
    public var connectionTimeout: Int
    /// Seconds a request may take to arrive whole (request line, head and body), whatever the
    /// pace of its bytes; 0 means no deadline. See `ConnectionTracker`.
    public var requestReadTimeout: Int = 10
    /// Peers exempt from `perIPConnectionLimit` (the service's trusted proxies).
    public var trustedProxies: [CIDR] = []
    /// How connections are counted per client for `perIPConnectionLimit` and shed when the
    /// listener is full (an IPv6 peer by its prefix).
    public var clientKeying = ClientKeying()
    /// Serves HTTPS with these certificates when set (TLS 1.2 and 1.3 only).
    public var tls: TLSCertificateStore?
    public var connectionMemoryLimit: Int
    public var maxBodyBytes: Int
    /// What this listener serves (see `Listener`); set on every request it receives.
    public var listener: Listener = .main
    /// One access-log line per request, and `X-Request-Id` on every response (`AccessLog`).
    public var accessLog = false
    /// Work that rides on each HTTP thread, created on the thread over its epoll set: the
    /// upstream HTTP/1.1 client (`CurlEventLoop.localClient(on:)`), and with Redis the shared
    /// tier's connection (both as one `LoopGuestGroup`), so that a miss's upstream exchange and
    /// its Redis commands run on the thread that read the request. nil: none.
    package var loopGuest: (@Sendable (EpollSet) -> any LoopGuest)?

    public init(
        host: String = "127.0.0.1", port: UInt16 = 8080, threads: Int = 0, connectionLimit: Int = 4096,
        perIPConnectionLimit: Int = 0, connectionTimeout: Int = 30, connectionMemoryLimit: Int = 16_384,
        maxBodyBytes: Int = 1 << 20
    ) {
        self.host = host
        self.port = port
        self.threads = threads
        self.connectionLimit = connectionLimit
        self.perIPConnectionLimit = perIPConnectionLimit
        self.connectionTimeout = connectionTimeout
        self.connectionMemoryLimit = connectionMemoryLimit
        self.maxBodyBytes = maxBodyBytes
    }

    /// The HTTP threads `threads` asks for: itself, or one per online core for 0.
    public static func workerThreads(configured threads: Int) -> Int {
        threads > 0 ? threads : max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }
}
