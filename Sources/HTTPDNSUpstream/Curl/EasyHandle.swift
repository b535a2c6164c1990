import CCurl
import HTTPDNSCore

/// One curl easy handle and the buffers its callbacks fill. Confined to the ``CurlEventLoop``
/// thread; reused for many transfers: the options every transfer shares are set once, those of
/// a request (URL, method, body, headers, timeouts) for each.
final class EasyHandle {
    /// Responses larger than this are cut off with a transport error.
    static let maximumBodySize = 1 << 20
    /// Header blocks larger than this likewise.
    static let maximumHeaderSize = 64 << 10

    /// The `CURL *`.
    let handle: UnsafeMutableRawPointer
    private(set) var body: [UInt8] = []
    private(set) var headerBlock: [UInt8] = []
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// Called once when the current transfer ends.
    var completion: (@Sendable (Result<UpstreamHTTPResponse, UpstreamError>) -> Void)?
    /// The options every transfer shares are set (`prepare` sets them on first use).
    private var configured = false

    /// `curl_easy_init`; nil when libcurl is out of memory.
    init?() {
        CurlGlobal.ensureInitialised()
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(handle)
        if let headerList { curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
    }

    /// Sets up `request`: its own options, every one a request sets, so that nothing of the
    /// previous transfer's is left (`curl_easy_reset` and setting the shared options again cost
    /// a miss about 4 000 instructions), and empty buffers. Returns the first failing option's
    /// code, or CURLE_OK.
    func prepare(_ request: UpstreamHTTPRequest, completion: @escaping @Sendable (Result<UpstreamHTTPResponse, UpstreamError>) -> Void)
        -> CURLcode
    {
        body.removeAll(keepingCapacity: true)
        headerBlock.removeAll(keepingCapacity: true)
        errorBuffer[0] = 0
        self.completion = completion
        var result = CURLE_OK
        func set(_ code: CURLcode) { if result == CURLE_OK { result = code } }
        if !configured {
            configureShared(set)
            guard result == CURLE_OK else { return result }
            configured = true
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in request.headers {
            list = curl_slist_append(list, "\(header.name): \(header.value)")
        }
        // The new list is in place before the old one is freed.
        set(chttpdns_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list))
        if let headerList { curl_slist_free_all(headerList) }
        headerList = list
        // Waiting for a connection that might multiplex only pays where it can: HTTP/2 is
        // negotiated over TLS (ALPN). A plain-http upstream speaks HTTP/1.1, and with PIPEWAIT a
        // burst of transfers to a cold pool would all wait for the first one's whole answer.
        let pipeWait = request.url.utf8.starts(with: "https:".utf8) ? 1 : 0
        let timeout = max(1, request.timeoutMilliseconds)
        set(chttpdns_curl_setopt_str(handle, CURLOPT_URL, request.url))
        set(chttpdns_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeout))
        set(chttpdns_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, timeout))
        set(chttpdns_curl_setopt_long(handle, CURLOPT_PIPEWAIT, pipeWait))
        switch request.method {
        case .get:
            // Also ends a previous transfer's POST: the handle sends a GET without a body.
            set(chttpdns_curl_setopt_long(handle, CURLOPT_HTTPGET, 1))
        case .post:
            set(chttpdns_curl_setopt_long(handle, CURLOPT_POST, 1))
            set(chttpdns_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, request.body.count))
            set(
                request.body.withUnsafeBytes { raw in
                    // COPYPOSTFIELDS copies the bytes, so the array need not outlive the call.
                    chttpdns_curl_setopt_ptr(
                        handle, CURLOPT_COPYPOSTFIELDS,
                        UnsafeMutableRawPointer(mutating: raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
                })
        }
        return result
    }

    /// The options every transfer of this handle shares.
    private func configureShared(_ set: (CURLcode) -> Void) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        set(chttpdns_curl_setopt_str(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(chttpdns_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        set(chttpdns_curl_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1))
        set(chttpdns_curl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer))
        set(chttpdns_curl_setopt_write_fn(handle, CURLOPT_WRITEFUNCTION, EasyHandle.writeCallback))
        set(chttpdns_curl_setopt_ptr(handle, CURLOPT_WRITEDATA, me))
        set(chttpdns_curl_setopt_write_fn(handle, CURLOPT_HEADERFUNCTION, EasyHandle.headerCallback))
        set(chttpdns_curl_setopt_ptr(handle, CURLOPT_HEADERDATA, me))
    }

    /// The response of a transfer that finished with CURLE_OK.
    func response() -> UpstreamHTTPResponse {
        var status = 0
        _ = chttpdns_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return UpstreamHTTPResponse(status: status, headerBlock: headerBlock, body: body)
    }

    /// Maps a failed transfer's curl code to an ``UpstreamError``: CURLE_OPERATION_TIMEDOUT is a
    /// timeout, everything else a transport error carrying the curl code.
    func error(for code: CURLcode) -> UpstreamError {
        let detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
        return Self.error(for: code, detail: detail)
    }

    static func error(for code: CURLcode, detail: String) -> UpstreamError {
        if code == CURLE_OPERATION_TIMEDOUT {
            return UpstreamError(.timeout, detail, underlying: Int(code.rawValue))
        }
        return UpstreamError(.transport, detail, underlying: Int(code.rawValue))
    }

    private func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard body.count + bytes.count <= Self.maximumBodySize else { return false }
        body.append(contentsOf: bytes)
        return true
    }

    /// Keeps one header line; false when the block would outgrow `maximumHeaderSize`.
    private func headerLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if bytes.starts(with: "HTTP/".utf8) {
            // A new status line: 1xx interim responses and redirects start over.
            headerBlock.removeAll(keepingCapacity: true)
            return true
        }
        guard headerBlock.count + bytes.count <= Self.maximumHeaderSize else { return false }
        headerBlock.append(contentsOf: bytes)
        return true
    }

    private static let writeCallback: curl_write_callback = { data, size, count, context in
        let total = size * count
        guard let context else { return 0 }
        let easy = Unmanaged<EasyHandle>.fromOpaque(context).takeUnretainedValue()
        guard let data else { return total }
        return easy.append(UnsafeRawBufferPointer(start: data, count: total)) ? total : 0
    }

    private static let headerCallback: curl_write_callback = { data, size, count, context in
        let total = size * count
        guard let context, let data else { return total }
        let easy = Unmanaged<EasyHandle>.fromOpaque(context).takeUnretainedValue()
        return easy.headerLine(UnsafeRawBufferPointer(start: data, count: total)) ? total : 0
    }
}

@available(*, unavailable)
extension EasyHandle: Sendable {}
