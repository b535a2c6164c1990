import CCurl
import Foundation
import HTTPDNSCore
import HTTPDNSLoop
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One thread driving one curl multi handle: every upstream HTTP request of the process goes
/// through it, so connections, TLS sessions and HTTP/2 streams are shared. Requests to a plain
/// `http://` URL whose host is an address literal skip libcurl: the same thread runs them through
/// ``HTTP1Client``, httpdnsd's own HTTP/1.1 keep-alive client, in the same epoll set.
///
/// ``perform(_:completion:)`` may be called from any thread and never blocks: the request is
/// queued under a lock and the loop is woken through a pipe. Completions run on the loop
/// thread, outside any lock; they must be quick (hand heavy work elsewhere).
public final class CurlEventLoop: Sendable {
    private let shared: CurlLoopShared

    /// Starts the loop thread.
    /// - Parameters:
    ///   - maxConnectionsPerHost: `CURLMOPT_MAX_HOST_CONNECTIONS`, and the HTTP/1.1 client's limit
    ///     per origin (excess transfers queue, and their queueing counts against their timeout). An HTTP/1.1 upstream needs one
    ///     connection per query in flight: with 16, a 500 ms upstream caps misses at 32/s.
    ///     HTTP/2 upstreams multiplex many queries over one connection.
    ///   - maxTotalConnections: `CURLMOPT_MAX_TOTAL_CONNECTIONS`.
    ///   - maxCachedConnections: `CURLMOPT_MAXCONNECTS`, idle connections kept for reuse (each keeps
    ///     curl's buffers, so connections beyond it are closed after a burst rather than kept); the
    ///     HTTP/1.1 client keeps at most as many idle per origin.
    public init(maxConnectionsPerHost: Int = 256, maxTotalConnections: Int = 1024, maxCachedConnections: Int = 256) {
        CurlGlobal.ensureInitialised()
        guard let multi = curl_multi_init() else {
            fatalError("curl_multi_init failed (out of memory)")
        }
        // Options this libcurl does not take mean a build the service cannot run on: stop here,
        // naming the option, rather than run with curl's defaults.
        do throws(LoopCall.Failure) {
            try LoopCall.multi(
                chttpdns_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnectionsPerHost),
                "curl_multi_setopt(CURLMOPT_MAX_HOST_CONNECTIONS)")
            try LoopCall.multi(
                chttpdns_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, maxTotalConnections),
                "curl_multi_setopt(CURLMOPT_MAX_TOTAL_CONNECTIONS)")
            try LoopCall.multi(
                chttpdns_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, maxCachedConnections),
                "curl_multi_setopt(CURLMOPT_MAXCONNECTS)")
            try LoopCall.multi(
                chttpdns_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX)),
                "curl_multi_setopt(CURLMOPT_PIPELINING)")
        } catch {
            fatalError("curl event loop: \(error)")
        }
        let shared = CurlLoopShared(multi: multi, maxConnectionsPerHost: maxConnectionsPerHost, maxCachedConnections: maxCachedConnections)
        self.shared = shared
        shared.queue.startThread(named: "httpdnsd-curl") { CurlLoopWorker(shared: shared).run() }
    }

    deinit {
        shutdown()
    }

    /// Queues `request`; `completion` is called exactly once on the loop thread with the response
    /// (any HTTP status) or an error: `.timeout` for CURLE_OPERATION_TIMEDOUT, `.transport` (curl
    /// code in `underlying`; the HTTP/1.1 client gives the code curl would) for other failures and
    /// after ``shutdown()``.
    ///
    /// Called on a thread that carries this loop's local client (``localClient(on:)``), the
    /// request stays on that thread: the client there runs it, or hands it on here when it is
    /// not one for the HTTP/1.1 client. Beyond the client's `maximumInFlight` it comes here.
    public func perform(
        _ request: consuming UpstreamHTTPRequest,
        completion: @escaping @Sendable (Result<UpstreamHTTPResponse, UpstreamError>) -> Void
    ) {
        // The transfer moves into the client that runs it: a copy would retain its URL, headers,
        // body and completion, and release them again.
        let transfer = PendingTransfer(request: request, completion: completion)
        if let local = HTTP1LocalClient.current, local.owner === shared, !shared.stopped.load(ordering: .relaxed) {
            if let refused = local.take(consume transfer) { shared.enqueue(refused) }
            return
        }
        shared.enqueue(transfer)
    }

    /// An HTTP/1.1 client for this loop's requests that rides on the calling thread's event loop
    /// (an HTTP server thread; `sockets` is its epoll set): from now until the guest's
    /// `shutdown()`, ``perform(_:completion:)`` called on this thread runs plain-http
    /// address-literal requests here, with the same per-origin limits, on this thread's own
    /// connections, at most `maximumInFlight` at a time (the rest come to this loop). Call it on
    /// that thread.
    package func localClient(on sockets: EpollSet, maximumInFlight: Int = 128) -> any LoopGuest {
        HTTP1LocalClient(sockets: sockets, owner: shared, maximumInFlight: maximumInFlight)
    }

    /// Stops the loop thread, failing queued and running transfers with `.transport`, and waits
    /// for it to exit (unless called from the loop thread itself). Idempotent.
    public func shutdown() {
        shared.stopped.store(true, ordering: .relaxed)
        shared.queue.stopAndWait()
    }
}

/// A request waiting for the loop thread to pick it up.
struct PendingTransfer: Sendable {
    var request: UpstreamHTTPRequest
    var completion: @Sendable (Result<UpstreamHTTPResponse, UpstreamError>) -> Void
}

/// What callers and the loop thread share: the multi handle (used by the loop thread only) and
/// the queue of transfers with its wake-up pipe.
final class CurlLoopShared: @unchecked Sendable {
    /// The `CURLM *`, used on the loop thread only.
    let multi: UnsafeMutableRawPointer
    let queue = LoopQueue<PendingTransfer>(services: .service)
    /// Set by `shutdown()`: the threads' local clients then refuse too.
    let stopped = Atomic<Bool>(false)
    /// The same limits for the HTTP/1.1 client's connections to one origin.
    let maxConnectionsPerHost: Int
    let maxCachedConnections: Int

    /// What a request gets once the loop is shut down.
    static let shutDown = UpstreamError(.transport, "the curl event loop is shut down")

    init(multi: UnsafeMutableRawPointer, maxConnectionsPerHost: Int, maxCachedConnections: Int) {
        self.multi = multi
        self.maxConnectionsPerHost = maxConnectionsPerHost
        self.maxCachedConnections = maxCachedConnections
    }

    /// Queues `transfer` for the loop thread; fails it once the loop is shut down.
    func enqueue(_ transfer: PendingTransfer) {
        if !queue.enqueue(transfer) { transfer.completion(.failure(Self.shutDown)) }
    }
}
