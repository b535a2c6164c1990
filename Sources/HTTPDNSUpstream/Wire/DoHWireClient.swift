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
    private let queryPrefix: [UInt8]
    private static let headers = [HTTPHeader("Accept", "application/dns-message")]

    /// - Parameters:
    ///   - url: the endpoint, e.g. `https://dns.alidns.com/dns-query`.
    ///   - name: label for logs; defaults to `doh:URL`.
    public init(url: String, loop: CurlEventLoop, name: String? = nil) {
        self.url = url
        self.loop = loop
        queryPrefix = Array((url + URLQuery.separator(after: url) + "dns=").utf8)
        self.name = name ?? UpstreamSpec(kind: .doh, url: url).description
    }

    /// The GET URL for `query`: the message is written on the stack and encoded straight after
    /// the prefix, into the URL's one string.
    func requestURL(for query: UpstreamQuery) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: DNSQueryBuilder.maximumLength) { buffer in
            let length = DNSQueryBuilder.write(host: query.host, family: query.family, clientSubnet: query.clientSubnet, into: buffer)
            return Base64URL.encode(UnsafeBufferPointer(rebasing: buffer[..<length]), after: queryPrefix)
        }
    }

    public func resolve(_ query: UpstreamQuery, completion: @escaping @Sendable (Result<UpstreamAnswer, UpstreamError>) -> Void) {
        let request = UpstreamHTTPRequest(
            url: requestURL(for: query),
            headers: Self.headers,
            timeoutMilliseconds: query.timeoutMilliseconds
        )
        loop.performUpstream(request, family: query.family, parse: DNSReplyParser.parse, completion: completion)
    }
}
