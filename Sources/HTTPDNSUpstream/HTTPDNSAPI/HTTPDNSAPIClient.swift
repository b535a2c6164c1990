import HTTPDNSCore
import HTTPDNSCrypto

/// An upstream speaking the Alibaba EMAS HTTPDNS API (WIRE-FORMATS §3):
/// `GET {url}/{accountID}/d?host=H&query=4|6`, or with a secret key the signed
/// `/{accountID}/sign_d?host=H&query=..&t=T&s=md5(H-secret-T)` with `T = now + 600`.
/// A client subnet is sent as `ip=` (its address part; not signed). Requests go through a shared
/// ``CurlEventLoop``; completions run on its thread.
public struct HTTPDNSAPIClient: UpstreamResolver {
    /// Signed URLs stay valid this many seconds (the SDKs' choice).
    public static let signatureLifetime = 600

    public let name: String
    private let url: String
    private let loop: CurlEventLoop
    private let accountID: String
    private let secretKey: String?
    private let clock: any WallClock

    /// - Parameters:
    ///   - url: the service root, e.g. `http://203.107.1.1` (a trailing `/` is ignored).
    ///   - accountID: the EMAS account id, the first path segment.
    ///   - secretKey: when non-empty, requests are signed (`sign_d`).
    ///   - name: label for logs; defaults to `httpdns:URL`.
    ///   - clock: the time source for `t`.
    public init(
        url: String,
        loop: CurlEventLoop,
        accountID: String,
        secretKey: String? = nil,
        name: String? = nil,
        clock: any WallClock = SystemClock()
    ) {
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        self.url = base
        self.loop = loop
        self.accountID = accountID
        self.secretKey = secretKey?.isEmpty == false ? secretKey : nil
        self.name = name ?? UpstreamSpec(kind: .httpdns, url: url).description
        self.clock = clock
    }

    /// The request URL for `query`.
    func requestURL(for query: UpstreamQuery) throws(CryptoError) -> String {
        var parameters = URLQuery()
        let host = query.host.value
        parameters.append("host", host)
        parameters.append("query", query.family == .a ? "4" : "6")
        if let subnet = query.clientSubnet, let address = subnet.split(separator: "/").first {
            parameters.append("ip", String(address))
        }
        let path: String
        if let secretKey {
            let expiry = Int(clock.now().rounded(.down)) + Self.signatureLifetime
            parameters.append("t", String(expiry))
            parameters.append("s", try Digest.md5Hex("\(host)-\(secretKey)-\(expiry)"))
            path = "sign_d"
        } else {
            path = "d"
        }
        return parameters.url(base: "\(url)/\(URLQuery.escape(accountID))/\(path)")
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
            headers: [HTTPHeader("Accept", "application/json")],
            timeoutMilliseconds: query.timeoutMilliseconds
        )
        loop.performUpstream(request, family: query.family, parse: HTTPDNSAPIParser.parse, completion: completion)
    }
}
