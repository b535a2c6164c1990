import HTTPDNSCore

extension CurlEventLoop {
    /// Performs one upstream request the way every HTTP adapter does: transport failures pass
    /// through, an HTTP error status becomes the `UpstreamError` it stands for, and the body of a
    /// successful response goes to `parse` with the `family` asked. `observe` sees every response
    /// first (e.g. its `Date`). `parse` is a format's parser itself (a function that captures
    /// nothing), so that a request carries one closure context, not one per argument.
    func performUpstream(
        _ request: consuming UpstreamHTTPRequest,
        observe: (@Sendable (UpstreamHTTPResponse) -> Void)? = nil,
        family: RecordFamily,
        parse: @escaping @Sendable ([UInt8], RecordFamily) -> Result<UpstreamAnswer, UpstreamError>,
        completion: @escaping @Sendable (Result<UpstreamAnswer, UpstreamError>) -> Void
    ) {
        perform(request) { result in
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(let response):
                observe?(response)
                if let error = HTTPStatusError.error(for: response.status, body: response.body) {
                    completion(.failure(error))
                } else {
                    completion(parse(response.body, family))
                }
            }
        }
    }
}
