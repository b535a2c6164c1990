#if canImport(Glibc)
    import Glibc
#endif

/// Where a plain-http upstream whose host is an address literal listens: the socket address to
/// connect to and the `Host` header value. ``parse(_:)`` accepts only `http://` URLs with an
/// IPv4 or bracketed IPv6 literal (optional port, default 80) and nothing curl would have to
/// rewrite (user info, a fragment, a zone ID, spaces or control characters); every other URL is
/// left to libcurl.
///
/// Two origins are equal when their authorities (`host[:port]` as written) are: that is the pool key.
struct HTTP1Origin: Hashable {
    /// `host[:port]` as written in the URL: the `Host` header value.
    let authority: String
    /// `sockaddr_in` or `sockaddr_in6`, in a `sockaddr_storage`.
    let address: sockaddr_storage
    let addressLength: socklen_t

    static func == (left: HTTP1Origin, right: HTTP1Origin) -> Bool { left.authority == right.authority }

    func hash(into hasher: inout Hasher) { hasher.combine(authority) }

    /// The origin of `url` and where its request target (path and query) starts in `url.utf8`;
    /// nil when `url` is not an `http://` URL with an address literal this client handles.
    static func parse(_ url: String) -> (origin: HTTP1Origin, target: String.Index)? {
        let utf8 = url.utf8
        guard utf8.starts(with: "http://".utf8) else { return nil }
        let start = utf8.index(utf8.startIndex, offsetBy: 7)
        var end = start
        while end < utf8.endIndex, utf8[end] != UInt8(ascii: "/"), utf8[end] != UInt8(ascii: "?") { end = utf8.index(after: end) }
        for byte in utf8[end...] where byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "#") { return nil }
        guard let origin = HTTP1Origin(authority: Substring(url[start..<end])) else { return nil }
        return (origin, end)
    }

    /// `a.b.c.d[:port]` or `[v6][:port]`.
    private init?(authority: Substring) {
        var host = authority
        var portText: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard let port = Self.port(portText) else { return nil }
        var storage = sockaddr_storage()
        let length: socklen_t?
        if authority.first == "[" {
            length = Self.fill(&storage, v6: String(host), port: port)
        } else {
            length = Self.fill(&storage, v4: String(host), port: port)
        }
        guard let length else { return nil }
        self.authority = String(authority)
        address = storage
        addressLength = length
    }

    /// No port means 80; otherwise 1 to 65535 in decimal digits.
    private static func port(_ text: Substring?) -> UInt16? {
        guard let text else { return 80 }
        guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let value = Int(text), value > 0, value <= 65535
        else { return nil }
        return UInt16(value)
    }

    /// `inet_pton(AF_INET)`: dotted quad only.
    private static func fill(_ storage: inout sockaddr_storage, v4 host: String, port: UInt16) -> socklen_t? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
        withUnsafeMutableBytes(of: &storage) { raw in
            withUnsafeBytes(of: address) { raw.copyMemory(from: $0) }
        }
        return socklen_t(MemoryLayout<sockaddr_in>.size)
    }

    /// `inet_pton(AF_INET6)`: no zone ID (`%25eth0` is left to curl).
    private static func fill(_ storage: inout sockaddr_storage, v6 host: String, port: UInt16) -> socklen_t? {
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { return nil }
        withUnsafeMutableBytes(of: &storage) { raw in
            withUnsafeBytes(of: address) { raw.copyMemory(from: $0) }
        }
        return socklen_t(MemoryLayout<sockaddr_in6>.size)
    }
}
