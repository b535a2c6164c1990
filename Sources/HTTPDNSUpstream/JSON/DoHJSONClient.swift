import HTTPDNSCore
import HTTPDNSCrypto

/// An upstream speaking the DoH JSON API (`GET {url}?name=NAME&type=1|28`), e.g. Alibaba Public
/// DNS, Google, Cloudflare (WIRE-FORMATS §1). Requests go through a shared ``CurlEventLoop``;
/// completions run on its thread.
public struct DoHJSONClient: UpstreamResolver {
    public let name: String
    private let url: String
    private let loop: CurlEventLoop
    private let signer: DoHJSONSigner?
    private let clock: any WallClock
    private let offset = ServerClockOffset()

    /// - Parameters:
    ///   - url: the endpoint, e.g. `https://223.5.5.5/resolve` (query parameters are appended).
    ///   - name: label for logs; defaults to `json:URL`.
    ///   - accountID, accessKeyId, accessKeySecret: when all three are non-empty, requests are
    ///     signed; `ts` is corrected by the offset learnt from earlier responses' `Date` headers.
    ///   - clock: the time source for `ts`.
    public init(
        url: String,
        loop: CurlEventLoop,
        name: String? = nil,
        accountID: String? = nil,
        accessKeyId: String? = nil,
        accessKeySecret: String? = nil,
        clock: any WallClock = SystemClock()
    ) {
        self.url = url
        self.loop = loop
        self.name = name ?? UpstreamSpec(kind: .json, url: url).description
        if let accountID, let accessKeyId, let accessKeySecret,
            !accountID.isEmpty, !accessKeyId.isEmpty, !accessKeySecret.isEmpty
        {
            signer = DoHJSONSigner(accountID: accountID, accessKeyId: accessKeyId, accessKeySecret: accessKeySecret)
        } else {
            signer = nil
        }
        self.clock = clock
    }

    /// The request URL for `query` (exposed for tests and logs; includes the signature).
    func requestURL(for query: UpstreamQuery) throws(CryptoError) -> String {
        var parameters = URLQuery()
        parameters.append("name", query.host.value)
        parameters.append("type", String(query.family.rawValue))
        if let subnet = query.clientSubnet {
            parameters.append("edns_client_subnet", subnet)
        }
        if let signer {
            let timestamp = Int((clock.now() + offset.seconds).rounded(.down))
            try signer.sign(&parameters, name: query.host.value, timestamp: timestamp)
        }
        return parameters.url(base: url)
    }

    public func resolve(_ query: UpstreamQuery, completion: @escaping @Sendable (Result<UpstreamAnswer, UpstreamError>) -> Void) {
        let url: String
        do {
            url = try requestURL(for: query)
        } catch {
            completion(.failure(UpstreamError(.transport, "cannot sign the request to \(name): \(error)")))
            return
        }
        let request = UpstreamHTTPRequest(
            url: url,
            headers: [HTTPHeader("Accept", "application/dns-json")],
            timeoutMilliseconds: query.timeoutMilliseconds
        )
        let offset = self.offset
        let clock = self.clock
        loop.performUpstream(
            request,
            observe: { offset.learn(dateHeader: $0.header("Date"), now: clock.now()) },
            family: query.family, parse: DoHJSONParser.parse,
            completion: completion)
    }
}
