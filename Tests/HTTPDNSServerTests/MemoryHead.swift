@testable import HTTPDNSServer

/// A request head held in memory, read the way `ConnectionHead` reads libmicrohttpd's (first
/// value of an exact name; a name without `=` has the empty value).
final class MemoryHead: RequestHead {
    private var storage: [UnsafeMutableRawBufferPointer] = []
    private(set) var method = UnsafeRawBufferPointer(start: nil, count: 0)
    private(set) var path = UnsafeRawBufferPointer(start: nil, count: 0)
    private var arguments: [(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?)] = []
    var peerAddress: PeerAddress?
    /// The `Authorization` header (read by the signature check).
    let authorization: String?
    /// The `Accept` header (read by the fast path on `/dns-query`).
    let accept: String?
    /// The `X-Forwarded-For` fields, joined (read for the trusted-proxy rule).
    let forwardedFor: String?
    /// The access log's request id (none: the access log is off).
    var requestID: String? { nil }

    init(
        _ method: String, _ path: String, _ arguments: [(String, String?)] = [], peer: String? = nil, authorization: String? = nil,
        accept: String? = nil, forwardedFor: String? = nil
    ) {
        peerAddress = peer.flatMap(PeerAddress.init)
        self.authorization = authorization
        self.accept = accept
        self.forwardedFor = forwardedFor
        self.method = copy(method)
        self.path = copy(path)
        self.arguments = arguments.map { (copy($0.0), $0.1.map(copy)) }
    }

    deinit { for buffer in storage { buffer.deallocate() } }

    private func copy(_ text: String) -> UnsafeRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(text.utf8.count, 1), alignment: 1)
        buffer.copyBytes(from: text.utf8)
        storage.append(buffer)
        return UnsafeRawBufferPointer(rebasing: buffer[..<text.utf8.count])
    }

    func arguments(_ names: ArgumentNames) -> RequestArguments? {
        var search = ArgumentSearch(names: names)
        for (name, value) in arguments { search.offer(name, value: value) }
        return search.refused ? nil : search.found
    }

    func header(_ name: StaticString) -> UnsafeRawBufferPointer? {
        name.description.lowercased() == "accept" ? accept.map(copy) : nil
    }

    /// Its arguments collected as `ConnectionHead` collects libmicrohttpd's.
    func withSignedParts<Result>(_ body: (SignedParts) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: ArgumentPair.self, capacity: max(arguments.count, 1)) { storage in
            var collector = ArgumentPairCollector(into: storage)
            for (name, value) in arguments { collector.offer(name: name, value: value) }
            func parts(_ authorization: UnsafeRawBufferPointer?) -> Result {
                body(
                    SignedParts(
                        method: method, path: path, arguments: collector.pairs, hasRepeatedNames: collector.hasRepeatedNames,
                        authorization: authorization, body: UnsafeRawBufferPointer(start: nil, count: 0)))
            }
            guard var authorization else { return parts(nil) }
            return authorization.withUTF8 { parts(UnsafeRawBufferPointer($0)) }
        }
    }

    /// The same request as the full path sees it.
    func request() -> HTTPRequest {
        var query = QueryArguments()
        for (name, value) in arguments {
            query.append(name: String(decoding: name, as: UTF8.self), value: value.map { String(decoding: $0, as: UTF8.self) } ?? "")
        }
        var request = HTTPRequest(
            method: String(decoding: method, as: UTF8.self), path: String(decoding: path, as: UTF8.self), query: query,
            authorization: authorization, body: [], peerAddress: peerAddress, forwardedFor: forwardedFor)
        request.accept = accept
        return request
    }
}
