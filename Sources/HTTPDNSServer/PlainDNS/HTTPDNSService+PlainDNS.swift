import HTTPDNSCore
import HTTPDNSWire

extension HTTPDNSService {
    /// Answers one plain DNS or DoT message (`docs/dns.md`, `docs/dot.md`) from `peer` for `account`, through the same
    /// question logic as RFC 8484 (`RFC8484Handler.answer`): A and AAAA from the engine's cache
    /// or its single-flight upstream request, other questions forwarded, REFUSED for a name the
    /// account's `domains` refuses, the query's Client Subnet or else `peer`'s network for an
    /// `ispEnable` account. Returns whether `reply` is called: then exactly once, with the
    /// response (at once for a cache hit, later for a miss; empty in the unlikely case that no
    /// response could be written). Nothing is sent for a message that is not a query (counted,
    /// dropped) nor for a UDP query over the client rate (`limitDecision`), which over TCP and
    /// DoT is REFUSED. A UDP response larger than the client's limit (`PlainDNSMessages.udpLimit`) is
    /// sent truncated. An account that does not exist answers REFUSED, as `/dns-query` 404.
    func answerPlainDNS(
        _ message: [UInt8], account: String, peer: PeerAddress, transport: PlainDNSMessages.Transport,
        metrics: PlainDNSMetrics, reply: @escaping @Sendable ([UInt8]) -> Void
    ) -> Bool {
        let index = PlainDNSMetrics.index(transport)
        let query: DNSQueryMessage
        do throws(DNSMessageError) {
            query = try DNSQueryMessage.parse(message)
        } catch {
            metrics.malformed[index].increment()
            return false
        }
        metrics.queries[index].increment()
        guard let engine = registry.engine(account) else {
            reply(Self.refusal(query))
            return true
        }
        var name = account
        let decision = name.withUTF8 { name in
            limitDecision(peer: { peer }, forwardedFor: { nil }, account: UnsafeRawBufferPointer(name), options: engine.lookupOptions)
        }
        if case .refused = decision {
            engine.metrics.clientRateRefusals.increment()
            metrics.rateLimited[index].increment()
            guard transport != .udp else { return false }
            reply(Self.refusal(query))
            return true
        }
        let clients = self.clients
        let result = handlers.rfc8484.answer(
            query, engine: engine, client: { clients.keying.id(peer) },
            peerNetwork: { clients.network(clientIP: nil, forwardedFor: nil, peer: peer) }, peerAddress: { peer.ipAddress })
        let limit = transport == .udp ? PlainDNSMessages.udpLimit(query) : Int(UInt16.max)
        let deliver: @Sendable (consuming HTTPResponse) -> Void = { response in
            // A response the writer failed to write (500) becomes SERVFAIL.
            let rendered = response.status == 200 ? response : RFC8484Rendering.serverFailure(query)
            guard rendered.status == 200, let fitted = PlainDNSMessages.fitted(rendered.body, query: query, limit: limit) else {
                reply([])
                return
            }
            if fitted.count != rendered.body.count { metrics.truncated.increment() }
            reply(fitted)
        }
        switch result {
        case .response(let response): deliver(response)
        case .deferred(let start): start(deliver)
        }
        return true
    }

    /// REFUSED for `query` (empty when it cannot be written).
    private static func refusal(_ query: DNSQueryMessage) -> [UInt8] {
        (try? DNSResponseWriter.response(to: query, rcode: DNSResponseWriter.refused, answer: nil)) ?? []
    }
}
