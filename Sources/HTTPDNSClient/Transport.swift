import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a service answered to one request.
public struct HTTPDNSTransportResponse: Sendable {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Sends one GET to a service. The default is `URLSessionTransport`; tests pass a stub.
public protocol HTTPDNSTransport: Sendable {
    /// GETs `url` with `headers`; throws when no HTTP response arrived within `timeout`.
    func get(_ url: URL, headers: [String: String], timeout: TimeInterval) async throws -> HTTPDNSTransportResponse
}

/// `HTTPDNSTransport` on an ephemeral `URLSession` (no cookies, no URL cache).
public final class URLSessionTransport: HTTPDNSTransport {
    private let session: URLSession

    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        session = URLSession(configuration: configuration)
    }

    deinit { session.invalidateAndCancel() }

    public func get(_ url: URL, headers: [String: String], timeout: TimeInterval) async throws -> HTTPDNSTransportResponse {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else {
            throw HTTPDNSClientError.badReply("not an HTTP response")
        }
        var lowered: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { lowered[name.lowercased()] = value }
        }
        return HTTPDNSTransportResponse(status: http.statusCode, headers: lowered, body: data)
    }
}
