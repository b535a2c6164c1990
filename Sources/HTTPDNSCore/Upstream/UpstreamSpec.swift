/// An upstream as operators write it: `KIND:URL`, KIND one of `json` (DoH JSON API), `doh`
/// (RFC 8484) or `httpdns` (EMAS HTTPDNS API).
public struct UpstreamSpec: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        case json
        case doh
        case httpdns
    }

    public var kind: Kind
    public var url: String

    public init(kind: Kind, url: String) {
        self.kind = kind
        self.url = url
    }

    /// Parses `json:https://223.5.5.5/resolve`; the URL must be http or https with a host.
    public init(parsing text: String, key: String) throws(ConfigError) {
        guard let colon = text.firstIndex(of: ":") else {
            throw ConfigError(key: key, "'\(text)' is not KIND:URL (KIND is json, doh or httpdns)")
        }
        guard let kind = Kind(rawValue: String(text[..<colon])) else {
            throw ConfigError(key: key, "unknown upstream kind '\(text[..<colon])' (use json, doh or httpdns)")
        }
        let url = String(text[text.index(after: colon)...])
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
            throw ConfigError(key: key, "upstream URL '\(url)' must start with http:// or https://")
        }
        let rest = url.drop(while: { $0 != "/" }).dropFirst(2)
        guard let first = rest.first, first != "/" else {
            throw ConfigError(key: key, "upstream URL '\(url)' has no host")
        }
        self.kind = kind
        self.url = url
    }

    public var description: String { "\(kind.rawValue):\(url)" }
}
