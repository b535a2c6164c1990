import CCurl
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPDNSCore
import Synchronization

/// One thread driving one curl multi handle: every upstream HTTP request of the process goes
/// through it, so connections, TLS sessions and HTTP/2 streams are shared.
///
/// ``perform(_:completion:)`` may be called from any thread and never blocks: the request is
/// queued under a lock and the loop is woken through an eventfd. Completions run on the loop
/// thread, outside any lock; they must be quick (hand heavy work elsewhere).
public final class CurlEventLoop: Sendable {
    private let shared: CurlLoopShared
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the loop thread.
    /// - Parameters:
    ///   - maxConnectionsPerHost: `CURLMOPT_MAX_HOST_CONNECTIONS` (excess transfers queue in curl,
    ///     and their queueing counts against their timeout). An HTTP/1.1 upstream needs one
    ///     connection per query in flight: with 16, a 500 ms upstream capped misses at 32/s in the
    ///     benchmark. HTTP/2 upstreams multiplex many queries over one connection.
    ///   - maxTotalConnections: `CURLMOPT_MAX_TOTAL_CONNECTIONS`.
    ///   - maxCachedConnections: `CURLMOPT_MAXCONNECTS`, idle connections kept for reuse (each keeps
    ///     curl's buffers, so connections beyond it are closed after a burst rather than kept).
    public init(maxConnectionsPerHost: Int = 256, maxTotalConnections: Int = 1024, maxCachedConnections: Int = 256) {
        CurlGlobal.ensureInitialised()
        guard let multi = curl_multi_init() else {
            fatalError("curl_multi_init failed (out of memory)")
        }
        _ = chttpdns_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnectionsPerHost)
        _ = chttpdns_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, maxTotalConnections)
        _ = chttpdns_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, maxCachedConnections)
        _ = chttpdns_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        let shared = CurlLoopShared(multi: multi)
        self.shared = shared
        let finished = self.finished
        let thread = Thread {
            shared.loopThread.store(UInt(pthread_self()), ordering: .releasing)
            CurlLoopWorker(shared: shared).run()
            finished.signal()
        }
        thread.name = "httpdns-curl"
        thread.start()
    }

    deinit {
        shutdown()
    }

    /// Queues `request`; `completion` is called exactly once on the loop thread with the response
    /// (any HTTP status) or an error: `.timeout` for CURLE_OPERATION_TIMEDOUT, `.transport` (curl
    /// code in `underlying`) for other failures and after ``shutdown()``.
    public func perform(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, UpstreamError>) -> Void) {
        let accepted = shared.state.withLock { state -> Bool in
            guard !state.isShutdown else { return false }
            state.pending.append(PendingTransfer(request: request, completion: completion))
            // Under the lock, so the worker cannot have closed the eventfd yet.
            shared.wake()
            return true
        }
        if !accepted {
            completion(.failure(UpstreamError(.transport, "the curl event loop is shut down")))
        }
    }

    /// Stops the loop thread, failing queued and running transfers with `.transport`, and waits
    /// for it to exit (unless called from the loop thread itself). Idempotent.
    public func shutdown() {
        let first = shared.state.withLock { state -> Bool in
            guard !state.stopRequested else { return false }
            state.stopRequested = true
            if !state.isShutdown { shared.wake() }
            return true
        }
        guard first, shared.loopThread.load(ordering: .acquiring) != UInt(pthread_self()) else { return }
        finished.wait()
    }
}

/// A request waiting for the loop thread to pick it up.
struct PendingTransfer: Sendable {
    var request: HTTPRequest
    var completion: @Sendable (Result<HTTPResponse, UpstreamError>) -> Void
}

/// What callers and the loop thread share: the multi handle (used by the loop thread only), the
/// queue behind a lock, and the eventfd that wakes the loop.
final class CurlLoopShared: @unchecked Sendable {
    struct State {
        var pending: [PendingTransfer] = []
        /// Set by `shutdown()`; the worker then stops.
        var stopRequested = false
        /// Set by the worker once it stopped taking requests; the multi handle is then gone.
        var isShutdown = false
    }

    /// The `CURLM *`, used on the loop thread only.
    let multi: UnsafeMutableRawPointer
    let state = Mutex(State())
    /// The loop thread's `pthread_self()`, so `shutdown()` never waits for itself.
    let loopThread = Atomic<UInt>(0)
    /// Written to wake the loop; the worker closes it once `isShutdown` is set (callers only
    /// write it under the state lock while `isShutdown` is false).
    let wakeFD: Int32

    init(multi: UnsafeMutableRawPointer) {
        self.multi = multi
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        precondition(wakeFD >= 0, "eventfd failed: errno \(errno)")
    }

    /// Wakes the loop thread (an eventfd counter; any number of wakes before it runs is one).
    func wake() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(wakeFD, $0.baseAddress, 8) }
    }
}
