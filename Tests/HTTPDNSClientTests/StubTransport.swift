import Foundation
import HTTPDNSClient
import Synchronization

/// A clock that moves only when a test moves it.
final class ManualHTTPDNSClock: HTTPDNSClock {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_767_225_600)) { current = Mutex(start) }

    func now() -> Date { current.withLock { $0 } }

    func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}

/// A transport that answers from a test's closure and records every URL asked.
final class StubTransport: HTTPDNSTransport {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "connection refused (stub)" }
    }

    private let requests = Mutex<[URL]>([])
    private let answer: @Sendable (URL) throws -> HTTPDNSTransportResponse

    init(_ answer: @escaping @Sendable (URL) throws -> HTTPDNSTransportResponse) { self.answer = answer }

    var urls: [URL] { requests.withLock { $0 } }

    func get(_ url: URL, headers: [String: String], timeout: TimeInterval) async throws -> HTTPDNSTransportResponse {
        requests.withLock { $0.append(url) }
        return try answer(url)
    }

    /// A 200 JSON reply.
    static func json(_ text: String, status: Int = 200, date: String? = nil) -> HTTPDNSTransportResponse {
        var headers = ["content-type": "application/json"]
        if let date { headers["date"] = date }
        return HTTPDNSTransportResponse(status: status, headers: headers, body: Data(text.utf8))
    }

    /// The single-host answer the v1 API gives.
    static func answer(_ host: String, _ ips: [String], ttl: Int = 60) -> HTTPDNSTransportResponse {
        let list = ips.map { "\"\($0)\"" }.joined(separator: ",")
        return json(
            #"{"host":"\#(host)","ips":[\#(list)],"ipsv6":[],"ttl":\#(ttl),"origin_ttl":\#(ttl),"#
                + #""source":"upstream","stale":false}"#)
    }
}

/// A system resolver that answers from a table (and counts its calls).
final class StubSystemResolver: HTTPDNSSystemResolver {
    private let calls = Mutex(0)
    let table: [String: [String]]

    init(_ table: [String: [String]]) { self.table = table }

    var count: Int { calls.withLock { $0 } }

    func resolve(_ host: String) async throws -> [String] {
        calls.withLock { $0 += 1 }
        guard let addresses = table[host] else { throw StubTransport.Failure() }
        return addresses
    }
}

extension URL {
    /// The value of query argument `name`.
    func argument(_ name: String) -> String? {
        URLComponents(url: self, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }
}
