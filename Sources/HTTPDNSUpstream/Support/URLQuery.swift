import HTTPDNSCore

/// Builds URL query strings with RFC 3986 percent-encoding (only unreserved characters stay).
struct URLQuery {
    private(set) var items: [(String, String)] = []

    mutating func append(_ name: String, _ value: String) {
        items.append((name, value))
    }

    /// `name=value&...`, percent-encoded.
    var encoded: String {
        items.map { Self.escape($0.0) + "=" + Self.escape($0.1) }.joined(separator: "&")
    }

    /// `base` with the query appended after `?` (or `&` when `base` already has a query).
    func url(base: String) -> String {
        guard !items.isEmpty else { return base }
        return base + Self.separator(after: base) + encoded
    }

    static func escape(_ text: String) -> String { PercentEncoding.encode(text) }

    /// `&` when `base` already has a query, else `?`. Compared as bytes: `String.contains` of a
    /// string is Foundation's locale-aware search, about 8 000 instructions a call.
    static func separator(after base: String) -> String {
        base.utf8.contains(UInt8(ascii: "?")) ? "&" : "?"
    }
}
