import Foundation
import HTTPDNSCore
import HTTPDNSLoop
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The fallback resolver: c-ares (`ares_getaddrinfo`) on its own thread with its own poll loop.
///
/// Asks the `host:port` servers it was given, or, with none, whatever `/etc/resolv.conf` and
/// `/etc/hosts` say. ``resolve(_:completion:)`` may be called from any thread and returns at
/// once; completions run on the resolver's thread. Answers carry no TTL (the engine applies its
/// default). Each query ends by `query.timeoutMilliseconds` at the latest (`.timeout`).
public final class SystemResolver: UpstreamResolver {
    public let name: String
    private let shared: AresLoopShared

    /// Starts the resolver thread.
    /// - Parameters:
    ///   - servers: `host:port` / `[v6]:port` / `host` entries (`ares_set_servers_ports_csv`);
    ///     empty uses the system configuration. With servers, `/etc/hosts` and search domains are
    ///     not consulted.
    ///   - name: label for logs and metrics.
    ///   - attemptTimeoutMilliseconds: c-ares per-try timeout (`ARES_OPT_TIMEOUTMS`); the
    ///     per-query deadline is `query.timeoutMilliseconds` regardless.
    ///   - tries: c-ares tries per server (`ARES_OPT_TRIES`).
    public init(servers: [String] = [], name: String = "localdns", attemptTimeoutMilliseconds: Int = 1000, tries: Int = 3) {
        self.name = name
        let shared = AresLoopShared(services: .service)
        self.shared = shared
        let configuration = AresLoopWorker.Configuration(
            servers: servers, attemptTimeoutMilliseconds: attemptTimeoutMilliseconds, tries: tries)
        shared.startThread(named: "httpdnsd-ares") { AresLoopWorker(shared: shared, configuration: configuration).run() }
    }

    deinit {
        shutdown()
    }

    public func resolve(_ query: UpstreamQuery, completion: @escaping @Sendable (Result<UpstreamAnswer, UpstreamError>) -> Void) {
        enqueue(PendingLookup(.address(query, completion), timeoutMilliseconds: query.timeoutMilliseconds))
    }

    private func enqueue(_ lookup: PendingLookup) {
        guard shared.enqueue(lookup) else {
            lookup.fail(UpstreamError(.transport, "the system resolver is shut down"))
            return
        }
    }

    /// Stops the thread (`ares_destroy`), failing pending lookups with `.transport`, and waits
    /// for it unless called from that thread. Idempotent.
    public func shutdown() {
        shared.stopAndWait()
    }
}

extension SystemResolver: DNSMessageForwarder {
    /// Sends a client's query as it is to the servers (`ares_send`: UDP, TCP when truncated;
    /// c-ares gives it an ID of its own and tries the next server on SERVFAIL, REFUSED or
    /// NOTIMP). The reply must parse as a reply with RCODE NOERROR or NXDOMAIN.
    public func forward(
        _ message: [UInt8], timeoutMilliseconds: Int, completion: @escaping @Sendable (Result<[UInt8], UpstreamError>) -> Void
    ) {
        enqueue(PendingLookup(.message(message, completion), timeoutMilliseconds: timeoutMilliseconds))
    }
}

/// A lookup waiting for the resolver thread.
struct PendingLookup: Sendable {
    enum Request: Sendable {
        /// The addresses of a name and family (`ares_getaddrinfo`).
        case address(UpstreamQuery, @Sendable (Result<UpstreamAnswer, UpstreamError>) -> Void)
        /// A whole DNS query, answered with the whole reply (`ares_send`).
        case message([UInt8], @Sendable (Result<[UInt8], UpstreamError>) -> Void)
    }

    var request: Request
    var timeoutMilliseconds: Int
    /// `MonotonicTime` seconds by which the completion must have been called.
    var deadline: Double

    init(_ request: Request, timeoutMilliseconds: Int) {
        self.request = request
        self.timeoutMilliseconds = timeoutMilliseconds
        self.deadline = MonotonicTime.now() + Double(max(1, timeoutMilliseconds)) / 1000
    }

    /// Calls the completion with `error`, whichever kind of lookup this is.
    func fail(_ error: UpstreamError) {
        switch request {
        case .address(_, let completion): completion(.failure(error))
        case .message(_, let completion): completion(.failure(error))
        }
    }
}

/// The resolver thread's queue.
typealias AresLoopShared = LoopQueue<PendingLookup>
