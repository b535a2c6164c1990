import CCurl

/// Process-wide libcurl initialisation, done once (thread-safe through `static let`).
enum CurlGlobal {
    /// `curl_global_init(CURL_GLOBAL_ALL)`; evaluated once on first use.
    static let initialised: Bool = chttpdns_curl_global_init_all() == CURLE_OK

    /// Makes sure libcurl is initialised before the first handle is created.
    static func ensureInitialised() {
        _ = initialised
    }
}
