import CCurl
import HTTPDNSCore

/// The loop thread's side of ``CurlEventLoop``: adds queued transfers to the multi handle,
/// drives it with `curl_multi_perform`/`curl_multi_poll`, and completes finished transfers.
/// Lives and dies on the loop thread.
final class CurlLoopWorker {
    private let shared: CurlLoopShared
    private var multi: UnsafeMutableRawPointer { shared.multi }
    /// Running transfers by their `CURL *`.
    private var active: [UnsafeMutableRawPointer: EasyHandle] = [:]
    /// Idle easy handles kept for the next transfers.
    private var idle: [EasyHandle] = []
    private let maximumIdle = 64

    init(shared: CurlLoopShared) {
        self.shared = shared
    }

    /// Runs until `shutdown()`; then fails what is left and cleans the multi handle up.
    func run() {
        while true {
            let (batch, stop) = shared.state.withLock { state in
                let batch = state.pending
                state.pending.removeAll()
                return (batch, state.stopRequested)
            }
            var done: [(EasyHandle?, @Sendable (Result<HTTPResponse, UpstreamError>) -> Void, Result<HTTPResponse, UpstreamError>)] = []
            if stop {
                let leftover = shared.state.withLock { state in
                    state.isShutdown = true
                    let rest = state.pending
                    state.pending.removeAll()
                    return rest
                }
                let error = UpstreamError(.transport, "the curl event loop is shut down")
                for transfer in batch + leftover { transfer.completion(.failure(error)) }
                for (_, easy) in active {
                    curl_multi_remove_handle(multi, easy.handle)
                    easy.completion?(.failure(error))
                }
                active.removeAll()
                idle.removeAll()
                curl_multi_cleanup(multi)
                return
            }
            for transfer in batch {
                if let failure = start(transfer) {
                    done.append((nil, transfer.completion, .failure(failure)))
                }
            }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
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
            for (easy, completion, result) in done {
                completion(result)
                if let easy, idle.count < maximumIdle { idle.append(easy) }
            }
            if done.isEmpty || running > 0 {
                var events: Int32 = 0
                curl_multi_poll(multi, nil, 0, 1000, &events)
            }
        }
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
}

@available(*, unavailable)
extension CurlLoopWorker: Sendable {}
