/// The network a client belongs to, as per-network caches (`ispEnable`) and EDNS Client Subnet
/// see it: the /24 of an IPv4 address, the /56 of an IPv6 address, in canonical text
/// (`192.0.2.0/24`, `2001:db8:1200::/56`). An IPv4-mapped IPv6 address (`::ffff:192.0.2.7`)
/// counts as IPv4. `""` stands for "no network".
///
/// Everything here is pure and cheap (no Foundation, no regular expressions): it runs on every
/// resolve request.
public enum ClientNetwork {
    /// Bits kept of an IPv4 client address (the ECS source prefix resolvers commonly use).
    public static let ipv4PrefixLength = 24
    /// Bits kept of an IPv6 client address.
    public static let ipv6PrefixLength = 56

    /// The /24 or /56 network of `address` as text.
    public static func network(of address: IPAddress) -> String {
        let address = address.mappedIPv4 ?? address
        if address.family == .a {
            return "\(address.byte(0)).\(address.byte(1)).\(address.byte(2)).0/\(ipv4PrefixLength)"
        }
        let network = IPAddress(family: .aaaa, bytes: CIDR.masked(address.bytes, to: ipv6PrefixLength)) ?? address
        return "\(network)/\(ipv6PrefixLength)"
    }

    /// The network of the address written in `text`; nil when `text` is not an IP address.
    public static func network(ofAddress text: String) -> String? {
        IPAddress(text).map(network(of:))
    }

    /// The network a request belongs to, `""` when no address is known. The address is chosen so:
    ///
    /// 1. `clientIP` (the `client_ip` query parameter), when it is an address;
    /// 2. else, when the TCP `peer` is in `trustedProxies` and `forwardedFor` (every
    ///    `X-Forwarded-For` field, comma-joined) is present: walk its list from the right, skip
    ///    addresses that are trusted proxies themselves, and take the first that is not. If every
    ///    address is trusted, the left-most one is taken. The walk stops at an element that is not
    ///    an address (`unknown`, garbage): what lies to its left was not written by a trusted
    ///    proxy, so the last trusted address reached (or the peer) is taken instead. Only the part
    ///    of the list that trusted proxies appended is believed; a client cannot choose its
    ///    network by sending a forged `X-Forwarded-For`.
    /// 3. else the `peer` address.
    public static func select(clientIP: String?, forwardedFor: String?, peer: IPAddress?, trustedProxies: [CIDR]) -> String {
        selectAddress(clientIP: clientIP, forwardedFor: forwardedFor, peer: peer, trustedProxies: trustedProxies)
            .map(network(of:)) ?? ""
    }

    /// The address `select` reduces to a network (see there); nil when none is known.
    public static func selectAddress(clientIP: String?, forwardedFor: String?, peer: IPAddress?, trustedProxies: [CIDR]) -> IPAddress? {
        if let clientIP, let address = IPAddress(clientIP) { return address }
        guard let peerAddress = peer else { return nil }
        guard let forwardedFor, !trustedProxies.isEmpty, isTrusted(peerAddress, trustedProxies) else { return peerAddress }
        var chosen = peerAddress
        for element in forwardedFor.split(separator: ",").reversed() {
            let token = trimmed(element)
            if token.isEmpty { continue }  // RFC 9110 §5.6.1: empty list elements are ignored
            guard let address = forwardedAddress(token) else { break }
            chosen = address
            if !isTrusted(address, trustedProxies) { return address }
        }
        return chosen
    }

    public static func isTrusted(_ address: IPAddress, _ trustedProxies: [CIDR]) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }

    /// One `X-Forwarded-For` element: `192.0.2.7`, `2001:db8::7`, and the forms some proxies
    /// write with a port, `192.0.2.7:5678`, `[2001:db8::7]` or `[2001:db8::7]:5678`.
    static func forwardedAddress(_ token: Substring) -> IPAddress? {
        if token.first == "[" {
            guard let close = token.firstIndex(of: "]") else { return nil }
            let rest = token[token.index(after: close)...]
            guard rest.isEmpty || rest.first == ":" else { return nil }
            return IPAddress(String(token[token.index(after: token.startIndex)..<close]))
        }
        if let colon = token.firstIndex(of: ":"), token.lastIndex(of: ":") == colon {
            return IPAddress(String(token[..<colon]))  // IPv4:port
        }
        return IPAddress(String(token))
    }

    /// `text` without leading and trailing spaces and tabs.
    static func trimmed(_ text: Substring) -> Substring {
        var result = text
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}
