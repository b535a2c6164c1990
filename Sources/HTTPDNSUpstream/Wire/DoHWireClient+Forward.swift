import HTTPDNSCore
import HTTPDNSCrypto
import HTTPDNSWire

extension DoHWireClient: DNSMessageForwarder {
    /// Forwards a client's query: `GET {url}?dns=` with the message's ID set to 0 (RFC 8484
    /// §4.1, cache-friendly), `Accept: application/dns-message`. The reply must parse as a reply
    /// (`DNSReplySummary`) with RCODE NOERROR or NXDOMAIN; its ID is the upstream's (0), the
    /// caller puts back the client's.
    public func forward(
        _ message: [UInt8], timeoutMilliseconds: Int, completion: @escaping @Sendable (Result<[UInt8], UpstreamError>) -> Void
    ) {
        var parameters = URLQuery()
        parameters.append("dns", Base64URL.encode(DNSHeader.settingID(0, of: message)))
        let request = UpstreamHTTPRequest(
            url: parameters.url(base: url), headers: [HTTPHeader("Accept", "application/dns-message")],
            timeoutMilliseconds: timeoutMilliseconds)
        loop.perform(request) { result in
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(let response):
                if let error = HTTPStatusError.error(for: response.status, body: response.body) {
                    completion(.failure(error))
                } else {
                    completion(DNSReplyCheck.checked(response.body))
                }
            }
        }
    }
}
