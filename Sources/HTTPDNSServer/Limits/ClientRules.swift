import HTTPDNSCore

/// Who a request's client is, by the service's rules: the peer, or the address `X-Forwarded-For`
/// names when the peer is one of `trustedProxies`; keyed for the per-client limits by `keying`
/// (an IPv6 address by its prefix); its network (`ClientNetwork.select`) for accounts with
/// `ispEnable`. The pipeline's limit step and the handlers read clients through this one value.
struct ClientRules: Sendable {
    /// Peers whose `X-Forwarded-For` is believed.
    let trustedProxies: [CIDR]
    let keying: ClientKeying

    /// The peer, or the address `X-Forwarded-For` names when the peer is a trusted proxy (the
    /// header is read only then).
    func peer(_ peer: PeerAddress, forwardedFor: () -> String?) -> PeerAddress {
        guard !trustedProxies.isEmpty, ClientNetwork.isTrusted(peer.ipAddress, trustedProxies), let forwarded = forwardedFor() else {
            return peer
        }
        return ClientNetwork.selectAddress(clientIP: nil, forwardedFor: forwarded, peer: peer.ipAddress, trustedProxies: trustedProxies)
            .map(PeerAddress.init) ?? peer
    }

    /// The client of a request for the per-client limits (never `client_ip`, which a client
    /// chooses freely).
    func address(of request: HTTPRequest) -> PeerAddress? {
        request.peerAddress.map { keying.key(peer($0, forwardedFor: { request.forwardedFor })) }
    }

    /// The same client as the engine knows it: whose share of the upstream budget a miss takes.
    func id(of request: HTTPRequest) -> ClientID? {
        request.peerAddress.map { keying.id(peer($0, forwardedFor: { request.forwardedFor })) }
    }

    /// `id(of:)` of a borrowed request.
    func id<Head: RequestHead>(_ head: Head) -> ClientID? {
        head.peerAddress.map { keying.id(peer($0, forwardedFor: { head.forwardedFor })) }
    }

    /// The client network of `request` (`198.51.100.0/24`, `2001:db8:1200::/56`, `""` when no
    /// address is known): from `client_ip`, else from `X-Forwarded-For` when the peer is a
    /// trusted proxy, else from the peer (`ClientNetwork.select` has the rules).
    func network(of request: HTTPRequest) -> String {
        network(clientIP: request.query["client_ip"], forwardedFor: request.forwardedFor, peer: request.peerAddress)
    }

    /// The same from the request's parts.
    func network(clientIP: String?, forwardedFor: String?, peer: PeerAddress?) -> String {
        ClientNetwork.select(clientIP: clientIP, forwardedFor: forwardedFor, peer: peer?.ipAddress, trustedProxies: trustedProxies)
    }

    /// `network(of:)` of a borrowed request whose `client_ip` argument is `clientIP` (the hit
    /// readers of v1 and RFC 8484, whose routes both read `client_ip`).
    func network<Head: RequestHead>(_ head: Head, clientIP: UnsafeRawBufferPointer?) -> String {
        network(clientIP: clientIP.map(HTTPDNSService.string), forwardedFor: forwardedFor(head), peer: head.peerAddress)
    }

    /// The `X-Forwarded-For` fields of a borrowed request for the trusted-proxy rule, which reads
    /// them only when trusted proxies are configured: without any, no header is read.
    func forwardedFor<Head: RequestHead>(_ head: Head) -> String? {
        trustedProxies.isEmpty ? nil : head.forwardedFor
    }

    /// The address a request names for its client (`ip` of EMAS, the address of DoH JSON's
    /// `edns_client_subnet`), else the client by the trusted-proxy rule: the address answers are
    /// chosen for.
    func selectAddress(clientIP: String?, forwardedFor: String?, peer: PeerAddress?) -> IPAddress? {
        ClientNetwork.selectAddress(clientIP: clientIP, forwardedFor: forwardedFor, peer: peer?.ipAddress, trustedProxies: trustedProxies)
    }
}
