/// An upstream that can pass a whole DNS message on and bring back the reply, for questions the
/// engine does not answer itself (RFC 8484 queries of types other than A and AAAA). Like
/// `UpstreamResolver.resolve`, `forward` returns at once and calls `completion` exactly once.
public protocol DNSMessageForwarder: Sendable {
    /// Sends `message` (a query) and completes with the reply, checked to be a well-formed reply
    /// with RCODE NOERROR or NXDOMAIN: a malformed reply, a DNS failure code, a transport or HTTP
    /// error is an `UpstreamError`, so the chain moves on to the next upstream.
    func forward(
        _ message: [UInt8], timeoutMilliseconds: Int, completion: @escaping @Sendable (Result<[UInt8], UpstreamError>) -> Void)
}

extension UpstreamChain {
    /// Whether some upstream (or the fallback) can forward messages.
    public var canForward: Bool {
        upstreams.contains { $0 is any DNSMessageForwarder } || fallback is any DNSMessageForwarder
    }

    /// Forwards `message` through the upstreams that can (`DNSMessageForwarder`), in order, then
    /// the fallback if it can; completes with the first reply or the last error.
    public func forward(
        _ message: [UInt8], timeoutMilliseconds: Int, completion: @escaping @Sendable (Result<[UInt8], UpstreamError>) -> Void
    ) {
        var forwarders = upstreams.compactMap { $0 as? any DNSMessageForwarder }
        if let fallback = fallback as? any DNSMessageForwarder { forwarders.append(fallback) }
        guard !forwarders.isEmpty else {
            completion(
                .failure(
                    UpstreamError(
                        .badRequest,
                        "no upstream of this account can forward DNS messages of other types than A and AAAA (a doh: upstream or the local DNS fallback can)"
                    )))
            return
        }
        Self.forward(message, through: forwarders[...], timeoutMilliseconds: timeoutMilliseconds, lastError: nil, completion: completion)
    }

    private static func forward(
        _ message: [UInt8], through forwarders: ArraySlice<any DNSMessageForwarder>, timeoutMilliseconds: Int, lastError: UpstreamError?,
        completion: @escaping @Sendable (Result<[UInt8], UpstreamError>) -> Void
    ) {
        guard let forwarder = forwarders.first else {
            completion(.failure(lastError ?? UpstreamError(.transport, "no upstream answered")))
            return
        }
        forwarder.forward(message, timeoutMilliseconds: timeoutMilliseconds) { result in
            switch result {
            case .success: completion(result)
            case .failure(let error):
                forward(
                    message, through: forwarders.dropFirst(), timeoutMilliseconds: timeoutMilliseconds, lastError: error,
                    completion: completion)
            }
        }
    }
}
