import CCurl
import Foundation

/// One libcurl transfer of a URL whose host is pinned to one address with CURLOPT_RESOLVE, so
/// that the connection goes to the address while the Host header, SNI and certificate
/// verification use the URL's name.
final class Transfer {
    /// Where the body goes, and how many bytes went there.
    final class Sink {
        let file: UnsafeMutablePointer<FILE>
        var written = 0

        init(_ file: UnsafeMutablePointer<FILE>) { self.file = file }
    }

    struct Failure: Error {
        var code: CURLcode
        var message: String
    }

    private let handle: UnsafeMutableRawPointer
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    init?() {
        guard curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK, let handle = curl_easy_init() else { return nil }
        self.handle = handle
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// The CURLOPT_RESOLVE entry `host:port:address` (an IPv6 address in brackets).
    static func resolveEntry(host: String, port: Int, address: String) -> String {
        "\(host):\(port):" + (address.contains(":") ? "[\(address)]" : address)
    }

    /// Fetches `url` from `address` into `sink`.
    func fetch(_ url: String, host: String, port: Int, address: String, caCertificates: String?, sink: Sink)
        throws(Failure)
    {
        curl_easy_reset(handle)
        errorBuffer[0] = 0
        let pinned = curl_slist_append(nil, Self.resolveEntry(host: host, port: port, address: address))
        defer { curl_slist_free_all(pinned) }
        var codes: [CURLcode] = [
            chttpdns_curl_setopt_str(handle, CURLOPT_URL, url),
            chttpdns_curl_setopt_slist(handle, CURLOPT_RESOLVE, pinned),
            chttpdns_curl_setopt_str(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
            chttpdns_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            chttpdns_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, 10_000),
            chttpdns_curl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer),
            chttpdns_curl_setopt_ptr(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(sink).toOpaque()),
            chttpdns_curl_setopt_write(handle) { data, size, count, context in
                guard let data, let context else { return 0 }
                let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
                let written = fwrite(data, size, count, sink.file)
                sink.written += written * size
                return written * size
            },
        ]
        if let caCertificates { codes.append(chttpdns_curl_setopt_str(handle, CURLOPT_CAINFO, caCertificates)) }
        try check(codes.first { $0 != CURLE_OK } ?? CURLE_OK, "setting the transfer's options")
        try check(curl_easy_perform(handle), "fetching \(url) from \(address)")
    }

    /// The one place a libcurl result is checked: anything but CURLE_OK becomes a `Failure`
    /// with libcurl's own message.
    private func check(_ code: CURLcode, _ what: String) throws(Failure) {
        guard code != CURLE_OK else { return }
        let detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
        throw Failure(code: code, message: "\(what): \(detail)")
    }

    /// The HTTP status of the last transfer.
    func status() throws(Failure) -> Int {
        var status = 0
        try check(chttpdns_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status), "reading the status")
        return status
    }
}
