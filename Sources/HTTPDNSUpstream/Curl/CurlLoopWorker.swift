import CCurl
import HTTPDNSCore
import HTTPDNSLoop

#if canImport(Glibc)
    import Glibc
#endif

/// The loop thread's side of ``CurlEventLoop``: adds queued transfers to the multi handle,
/// drives it with curl's multi_socket interface over one epoll set, and completes finished
/// transfers. Lives and dies on the loop thread.
///
/// curl says through its socket callback which sockets to watch for what, and through its timer
/// callback when it next needs a call; `epoll_wait` then returns only the sockets that are ready
/// and each gets one `curl_multi_socket_action`. The work per wake-up follows the sockets that
/// are ready, not the transfers that exist: `curl_multi_poll`/`curl_multi_perform` poll and walk
/// every transfer on every wake-up, which with 200 misses waiting on a slow upstream takes about
/// a third of the process's time spent on misses.
///
/// Transfers to a plain `http://` URL whose host is an address literal go to ``HTTP1Client``
/// instead, whose sockets are in the same epoll set: a ready descriptor is the client's when its
/// socket table has it, else curl's.
final class CurlLoopWorker {
    /// A transfer that ended: its handle (nil if it never started), its completion, its result.
    private typealias Completed = (
        EasyHandle?, @Sendable (Result<UpstreamHTTPResponse, UpstreamError>) -> Void, Result<UpstreamHTTPResponse, UpstreamError>
    )

    private let shared: CurlLoopShared
    private var multi: UnsafeMutableRawPointer { shared.multi }
    /// Running transfers by their `CURL *`.
    private var active: [UnsafeMutableRawPointer: EasyHandle] = [:]
    /// Idle easy handles kept for the next transfers.
    private var idle: [EasyHandle] = []
    private let maximumIdle = 64
    private let sockets: EpollSet
    /// Runs the requests to plain-http address-literal upstreams, over the same epoll set.
    private let http1: HTTP1Client
    /// When curl wants `CURL_SOCKET_TIMEOUT` next (monotonic milliseconds), nil for never.
    private var timerDeadline: Int64?

    /// Creates the epoll set and watches the wake-up pipe. Without them the loop cannot run at
    /// all: a failure stops the process with the call named.
    init(shared: CurlLoopShared) {
        self.shared = shared
        sockets = EpollSet(wake: shared.queue.wake, name: "curl")
        http1 = HTTP1Client(
            sockets: sockets, maxConnectionsPerHost: shared.maxConnectionsPerHost, maxIdlePerHost: shared.maxCachedConnections)
    }

    /// Runs until `shutdown()`; then fails what is left and cleans the multi handle up.
    func run() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        do throws(LoopCall.Failure) {
            try LoopCall.multi(chttpdns_curl_multi_socketfunction(multi, Self.socketCallback), "curl_multi_setopt(CURLMOPT_SOCKETFUNCTION)")
            try LoopCall.multi(
                chttpdns_curl_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, context), "curl_multi_setopt(CURLMOPT_SOCKETDATA)")
            try LoopCall.multi(chttpdns_curl_multi_timerfunction(multi, Self.timerCallback), "curl_multi_setopt(CURLMOPT_TIMERFUNCTION)")
            try LoopCall.multi(chttpdns_curl_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, context), "curl_multi_setopt(CURLMOPT_TIMERDATA)")
        } catch {
            fatalError("curl event loop: \(error)")
        }
        // The queue is looked at only after a wake-up (callers append under the lock, then
        // wake): taking the lock on every turn of the loop made callers contend with it.
        var woken = true
        while true {
            let (batch, stop) = woken ? shared.queue.take() : ([], false)
            woken = false
            if stop {
                finish(batch)
                return
            }
            var failed: [Completed] = []
            let now = batch.isEmpty ? 0 : MonotonicTime.milliseconds()
            for transfer in batch where !http1.start(transfer, now: now) {
                if let failure = start(transfer) { failed.append((nil, transfer.completion, .failure(failure))) }
            }
            complete(failed)
            // Adding a transfer sets curl's timer to 0: run what is due before waiting.
            if let deadline = timerDeadline, deadline <= MonotonicTime.milliseconds() {
                timerDeadline = nil
                socketAction(chttpdns_curl_socket_timeout(), mask: 0)
                collectFinished()
                continue
            }
            // A broken epoll set (EBADF, EINVAL) is reported by `wait`; curl's own timeouts still
            // end the transfers through the timer, the HTTP/1.1 client's through its deadlines.
            woken = sockets.wait(milliseconds: waitMilliseconds()) { ready in
                guard !http1.handle(ready) else { return }
                var mask: Int32 = 0
                if ready.readable { mask |= CURL_CSELECT_IN }
                if ready.writable { mask |= CURL_CSELECT_OUT }
                if ready.failed { mask |= CURL_CSELECT_ERR }
                socketAction(ready.fd, mask: mask)
            }
            if woken { shared.queue.wake.drain() }
            collectFinished()
            if let deadline = http1.nextDeadline() {
                let now = MonotonicTime.milliseconds()
                if deadline <= now { http1.expire(now: now) }
            }
        }
    }

    /// How long `epoll_wait` may wait: until curl's timer or the HTTP/1.1 client's earliest
    /// deadline, whichever is first, and at most a second.
    private func waitMilliseconds() -> Int32 {
        MonotonicTime.waitMilliseconds(until: timerDeadline, http1.nextDeadline(), now: MonotonicTime.milliseconds())
    }

    /// `curl_multi_socket_action` for a ready socket or the timer. A refusal (only curl's own
    /// trouble: out of memory, a bad socket) is reported; the transfers concerned end with their
    /// own errors or timeouts.
    private func socketAction(_ fd: curl_socket_t, mask: Int32) {
        var running: Int32 = 0
        do throws(LoopCall.Failure) {
            try LoopCall.multi(curl_multi_socket_action(multi, fd, mask, &running), "curl_multi_socket_action")
        } catch {
            LoopCall.report(error)
        }
    }

    /// `curl_multi_remove_handle`, reported when curl refuses (the handle is not reused then).
    private func remove(_ handle: UnsafeMutableRawPointer) -> Bool {
        do throws(LoopCall.Failure) {
            try LoopCall.multi(curl_multi_remove_handle(multi, handle), "curl_multi_remove_handle")
            return true
        } catch {
            LoopCall.report(error)
            return false
        }
    }

    /// Completes every transfer curl reports done.
    private func collectFinished() {
        var done: [Completed] = []
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard chttpdns_curl_msg_kind(message) == CURLMSG_DONE,
                let handle = chttpdns_curl_msg_handle(message),
                let easy = active.removeValue(forKey: handle),
                let completion = easy.completion
            else { continue }
            let code = chttpdns_curl_msg_result(message)
            let result: Result<UpstreamHTTPResponse, UpstreamError> =
                code == CURLE_OK ? .success(easy.response()) : .failure(easy.error(for: code))
            let removed = remove(handle)
            easy.completion = nil
            // A handle curl would not let go of is not reused for another transfer.
            done.append((removed ? easy : nil, completion, result))
        }
        complete(done)
    }

    private func complete(_ done: [Completed]) {
        for (easy, completion, result) in done {
            completion(result)
            if let easy, idle.count < maximumIdle { idle.append(easy) }
        }
    }

    /// Shutting down: fails what is queued and running, and releases curl and epoll.
    private func finish(_ batch: [PendingTransfer]) {
        let leftover = shared.queue.close()
        let error = CurlLoopShared.shutDown
        for transfer in batch + leftover { transfer.completion(.failure(error)) }
        http1.shutdown(error)
        for (_, easy) in active {
            _ = remove(easy.handle)
            easy.completion?(.failure(error))
        }
        active.removeAll()
        idle.removeAll()
        do throws(LoopCall.Failure) {
            try LoopCall.multi(curl_multi_cleanup(multi), "curl_multi_cleanup")
        } catch {
            LoopCall.report(error)
        }
        sockets.close()
    }

    /// Adds one transfer to the multi handle; returns an error when it could not start.
    private func start(_ transfer: PendingTransfer) -> UpstreamError? {
        guard let easy = idle.popLast() ?? EasyHandle() else {
            return UpstreamError(.transport, "curl_easy_init failed")
        }
        let code = easy.prepare(transfer.request, completion: transfer.completion)
        guard code == CURLE_OK else {
            easy.completion = nil
            return EasyHandle.error(for: code, detail: "bad request options: " + String(cString: curl_easy_strerror(code)))
        }
        let added = curl_multi_add_handle(multi, easy.handle)
        do throws(LoopCall.Failure) {
            try LoopCall.multi(added, "curl_multi_add_handle")
        } catch {
            easy.completion = nil
            return UpstreamError(.transport, error.description, underlying: Int(added.rawValue))
        }
        active[easy.handle] = easy
        return nil
    }

    // MARK: curl's callbacks (called on the loop thread, from inside curl calls made above)

    /// Watches `fd` for what curl asks (`CURL_POLL_IN`/`OUT`/`INOUT`), or stops (`CURL_POLL_REMOVE`).
    private func watch(_ fd: Int32, what: Int32) {
        guard what != CURL_POLL_REMOVE else {
            sockets.watch(fd, readable: false, writable: false)
            return
        }
        sockets.watch(fd, readable: what & CURL_POLL_IN != 0, writable: what & CURL_POLL_OUT != 0)
    }

    private static let socketCallback: curl_socket_callback = { _, fd, what, context, _ in
        guard let context else { return 0 }
        Unmanaged<CurlLoopWorker>.fromOpaque(context).takeUnretainedValue().watch(fd, what: what)
        return 0
    }

    private static let timerCallback: curl_multi_timer_callback = { _, milliseconds, context in
        guard let context else { return 0 }
        let worker = Unmanaged<CurlLoopWorker>.fromOpaque(context).takeUnretainedValue()
        worker.timerDeadline = milliseconds < 0 ? nil : MonotonicTime.milliseconds() + Int64(milliseconds)
        return 0
    }
}

@available(*, unavailable)
extension CurlLoopWorker: Sendable {}
