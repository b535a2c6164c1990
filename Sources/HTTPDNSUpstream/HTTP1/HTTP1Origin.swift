import HTTPDNSCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where a plain-http upstream whose host is an address literal listens: the socket address to
/// connect to and the `Host` header value. Only `http://` URLs with an IPv4 or bracketed IPv6
/// literal (optional port, default 80) and nothing curl would have to rewrite (user info, a
/// fragment, a zone ID, spaces or control characters) have one; every other URL is left to
/// libcurl.
///
/// Parsing runs on a URL's UTF-8 bytes: ``locate(_:)`` finds the authority (cheap, every
/// request), ``init(authority:)`` reads the address (once per origin, when its pool is made).
struct HTTP1Origin {
    /// `host[:port]` as written in the URL: the `Host` header value, and what tells origins apart.
    let authority: [UInt8]
    /// The address and port to connect to.
    let address: SocketAddress

    private static let scheme: StaticString = "http://"

    /// The offset in `url` where the authority ends and the request target (path and query)
    /// starts; nil when `url` is not `http://` or has bytes in its target curl would rewrite. The
    /// authority, from offset 7, is not checked here.
    static func locate(_ url: UnsafeBufferPointer<UInt8>) -> Int? {
        let prefix = UnsafeBufferPointer(start: scheme.utf8Start, count: scheme.utf8CodeUnitCount)
        guard url.count > prefix.count, url.starts(with: prefix) else { return nil }
        var end = prefix.count
        while end < url.count, url[end] != UInt8(ascii: "/"), url[end] != UInt8(ascii: "?") { end += 1 }
        return hasByteCurlRewrites(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: url[end...]))) ? nil : end
    }

    /// Whether `bytes` has a control character, a space, a byte of 0x7F or above, or `#`. Read
    /// eight bytes at a time: the target is most of a URL (an RFC 8484 query's base64url), and
    /// every request's is checked.
    static func hasByteCurlRewrites(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let hashes = ones &* UInt64(UInt8(ascii: "#"))
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // A byte of 0x80 or above, or one that 0x01 carries to 0x80 or above (0x7F).
            let high = (word | (word &+ ones)) & highs
            // A byte below 0x21, and a byte equal to `#` (zero after the XOR): each such byte's high
            // bit is set by the borrow of its subtraction (exact when no byte has its high bit set,
            // which `high` has ruled out before these are read).
            let low = (word &- ones &* 0x21) & ~word & highs
            let hash = ((word ^ hashes) &- ones) & ~(word ^ hashes) & highs
            if (high | low | hash) != 0 { return true }
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "#") { return true }
            index += 1
        }
        return false
    }

    /// The origin of `url` and the offset of its request target in its UTF-8; nil when `url` is
    /// not one this client serves. (The client itself locates first and parses once per origin.)
    static func parse(_ url: String) -> (origin: HTTP1Origin, target: Int)? {
        var url = url
        return url.withUTF8 { bytes in
            guard let target = locate(bytes), let origin = HTTP1Origin(authority: UnsafeBufferPointer(rebasing: bytes[7..<target])) else {
                return nil
            }
            return (origin, target)
        }
    }

    /// Whether `authority` is this origin's.
    func matches(_ authority: UnsafeBufferPointer<UInt8>) -> Bool {
        self.authority.withUnsafeBufferPointer { $0.elementsEqual(authority) }
    }

    /// The origin of `a.b.c.d[:port]` or `[v6][:port]`; nil for anything else (a host name).
    init?(authority: UnsafeBufferPointer<UInt8>) {
        guard let first = authority.first, first == UInt8(ascii: "[") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9"))
        else { return nil }
        let text = String(decoding: authority, as: UTF8.self)
        var host = Substring(text)
        var portText: Substring?
        if first == UInt8(ascii: "[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        // A bracketed host is IPv6, a bare one IPv4: the literal must be of its form's family.
        guard let port = Self.port(portText), let address = SocketAddress(String(host), port: port),
            address.family == (first == UInt8(ascii: "[") ? AF_INET6 : AF_INET)
        else { return nil }
        self.authority = Array(authority)
        self.address = address
    }

    /// No port means 80; otherwise 1 to 65535 in decimal digits.
    private static func port(_ text: Substring?) -> UInt16? {
        guard let text else { return 80 }
        guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let value = Int(text), value > 0, value <= 65535
        else { return nil }
        return UInt16(value)
    }
}
