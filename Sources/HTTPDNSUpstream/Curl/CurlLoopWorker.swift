import CCurl
#if canImport(Glibc)
import Glibc
#endif
import HTTPDNSCore

/// The loop thread's side of ``CurlEventLoop``: adds queued transfers to the multi handle,
/// drives it with curl's multi_socket interface over one epoll set, and completes finished
/// transfers. Lives and dies on the loop thread.
///
/// curl says through its socket callback which sockets to watch for what, and through its timer
/// callback when it next needs a call; `epoll_wait` then returns only the sockets that are ready
/// and each gets one `curl_multi_socket_action`. The work per wake-up follows the sockets that
/// are ready, not the transfers that exist: with `curl_multi_poll`/`curl_multi_perform`, every
/// wake-up polled and walked every transfer, and with 200 misses waiting on a slow upstream that
/// polling was about a third of the process's time spent on misses (benchmark section 5).
final class CurlLoopWorker {
    /// A transfer that ended: its handle (nil if it never started), its completion, its result.
    private typealias Completed = (EasyHandle?, @Sendable (Result<HTTPResponse, UpstreamError>) -> Void, Result<HTTPResponse, UpstreamError>)

    private let shared: CurlLoopShared
    private var multi: UnsafeMutableRawPointer { shared.multi }
    /// Running transfers by their `CURL *`.
    private var active: [UnsafeMutableRawPointer: EasyHandle] = [:]
    /// Idle easy handles kept for the next transfers.
    private var idle: [EasyHandle] = []
    private let maximumIdle = 64
    private let epollFD: Int32
    /// Sockets in the epoll set (a closed socket leaves the set by itself; its number may come
    /// back for a new socket, which `watch` handles).
    private var watched: Set<Int32> = []
    /// When curl wants `CURL_SOCKET_TIMEOUT` next (monotonic milliseconds), nil for never.
    private var timerDeadline: Int64?

    init(shared: CurlLoopShared) {
        self.shared = shared
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epollFD >= 0, "epoll_create1 failed: errno \(errno)")
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = shared.queue.wake.readDescriptor
        precondition(epoll_ctl(epollFD, EPOLL_CTL_ADD, event.data.fd, &event) == 0, "epoll_ctl(wake pipe) failed: errno \(errno)")
    }

    /// Runs until `shutdown()`; then fails what is left and cleans the multi handle up.
    func run() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = chttpdns_curl_multi_socketfunction(multi, Self.socketCallback)
        _ = chttpdns_curl_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, context)
        _ = chttpdns_curl_multi_timerfunction(multi, Self.timerCallback)
        _ = chttpdns_curl_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, context)
        var events = [epoll_event](repeating: epoll_event(), count: 256)
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
            for transfer in batch {
                if let failure = start(transfer) { failed.append((nil, transfer.completion, .failure(failure))) }
            }
            complete(failed)
            // Adding a transfer sets curl's timer to 0: run what is due before waiting.
            if let deadline = timerDeadline, deadline <= Self.nowMilliseconds() {
                timerDeadline = nil
                var running: Int32 = 0
                curl_multi_socket_action(multi, chttpdns_curl_socket_timeout(), 0, &running)
                collectFinished()
                continue
            }
            let wait = timerDeadline.map { Int32(clamping: max(0, $0 - Self.nowMilliseconds())) }.map { min($0, 1000) } ?? 1000
            let count = events.withUnsafeMutableBufferPointer { epoll_wait(epollFD, $0.baseAddress, Int32($0.count), wait) }
            guard count > 0 else { continue }
            for index in 0..<Int(count) {
                let fd = events[index].data.fd
                if fd == shared.queue.wake.readDescriptor {
                    shared.queue.wake.drain()
                    woken = true
                    continue
                }
                let ready = events[index].events
                var mask: Int32 = 0
                if ready & EPOLLIN.rawValue != 0 { mask |= CURL_CSELECT_IN }
                if ready & EPOLLOUT.rawValue != 0 { mask |= CURL_CSELECT_OUT }
                if ready & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { mask |= CURL_CSELECT_ERR }
                var running: Int32 = 0
                curl_multi_socket_action(multi, fd, mask, &running)
            }
            collectFinished()
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
            let result: Result<HTTPResponse, UpstreamError> =
                code == CURLE_OK ? .success(easy.response()) : .failure(easy.error(for: code))
            curl_multi_remove_handle(multi, handle)
            easy.completion = nil
            done.append((easy, completion, result))
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
        let error = UpstreamError(.transport, "the curl event loop is shut down")
        for transfer in batch + leftover { transfer.completion(.failure(error)) }
        for (_, easy) in active {
            curl_multi_remove_handle(multi, easy.handle)
            easy.completion?(.failure(error))
        }
        active.removeAll()
        idle.removeAll()
        curl_multi_cleanup(multi)
        close(epollFD)
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
        guard added == CURLM_OK else {
            easy.completion = nil
            return UpstreamError(.transport, "curl_multi_add_handle: " + String(cString: curl_multi_strerror(added)), underlying: Int(added.rawValue))
        }
        active[easy.handle] = easy
        return nil
    }

    // MARK: curl's callbacks (called on the loop thread, from inside curl calls made above)

    /// Watches `fd` for what curl asks (`CURL_POLL_IN`/`OUT`/`INOUT`), or stops (`CURL_POLL_REMOVE`).
    private func watch(_ fd: Int32, what: Int32) {
        if what == CURL_POLL_REMOVE {
            if watched.remove(fd) != nil { _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil) }
            return
        }
        var event = epoll_event()
        event.events = (what & CURL_POLL_IN != 0 ? EPOLLIN.rawValue : 0) | (what & CURL_POLL_OUT != 0 ? EPOLLOUT.rawValue : 0)
        event.data.fd = fd
        // A number in `watched` may belong to a socket closed without a REMOVE (it left the set
        // when it closed); a number not in it may still be in the set: try the other operation.
        let first = watched.contains(fd) ? EPOLL_CTL_MOD : EPOLL_CTL_ADD
        if epoll_ctl(epollFD, first, fd, &event) != 0 {
            _ = epoll_ctl(epollFD, first == EPOLL_CTL_MOD ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event)
        }
        watched.insert(fd)
    }

    private static let socketCallback: curl_socket_callback = { _, fd, what, context, _ in
        guard let context else { return 0 }
        Unmanaged<CurlLoopWorker>.fromOpaque(context).takeUnretainedValue().watch(fd, what: what)
        return 0
    }

    private static let timerCallback: curl_multi_timer_callback = { _, milliseconds, context in
        guard let context else { return 0 }
        let worker = Unmanaged<CurlLoopWorker>.fromOpaque(context).takeUnretainedValue()
        worker.timerDeadline = milliseconds < 0 ? nil : nowMilliseconds() + Int64(milliseconds)
        return 0
    }

    private static func nowMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

@available(*, unavailable)
extension CurlLoopWorker: Sendable {}
