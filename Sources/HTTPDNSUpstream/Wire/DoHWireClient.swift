import HTTPDNSCore
import HTTPDNSCrypto

/// An RFC 8484 DNS-over-HTTPS upstream: `GET {url}?dns=BASE64URL(query)` with
/// `Accept: application/dns-message` (WIRE-FORMATS §2). Queries have ID 0 and RD set and carry
/// an EDNS Client Subnet option when the query names a client subnet. Requests go through a
/// shared ``CurlEventLoop``; completions run on its thread.
public struct DoHWireClient: UpstreamResolver {
    public let name: String
    let url: String
    let loop: CurlEventLoop
    /// `url` followed by `?dns=` (or `&dns=`): a query's URL is this and the base64url of its
    /// message, whose alphabet needs no percent-encoding (RFC 4648 section 5).
    private let queryPrefix: String

    /// - Parameters:
    ///   - url: the endpoint, e.g. `https://dns.alidns.com/dns-query`.
    ///   - name: label for logs; defaults to `doh:URL`.
    public init(url: String, loop: CurlEventLoop, name: String? = nil) {
        self.url = url
        self.loop = loop
        queryPrefix = url + URLQuery.separator(after: url) + "dns="
        self.name = name ?? UpstreamSpec(kind: .doh, url: url).description
    }

    /// The GET URL for `query`, or nil when the name cannot be encoded.
    func requestURL(for query: UpstreamQuery) -> String? {
        guard let message = DNSQueryBuilder.query(host: query.host.value, family: query.family, clientSubnet: query.clientSubnet) else {
            return nil
        }
        return queryPrefix + Base64URL.encode(message)
    }

    public func resolve(_ query: UpstreamQuery, completion: @escaping @Sendable (Result<UpstreamAnswer, UpstreamError>) -> Void) {
        guard let requestURL = requestURL(for: query) else {
            completion(.failure(UpstreamError(.badRequest, "cannot encode a DNS query for '\(query.host)'")))
            return
        }
        let request = UpstreamHTTPRequest(
            url: requestURL,
            headers: [HTTPHeader("Accept", "application/dns-message")],
            timeoutMilliseconds: query.timeoutMilliseconds
        )
        loop.performUpstream(request, parse: { DNSReplyParser.parse($0, family: query.family) }, completion: completion)
    }
}
