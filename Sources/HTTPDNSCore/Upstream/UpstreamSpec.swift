/// An upstream as operators write it: `KIND:URL`, KIND one of `json` (DoH JSON API), `doh`
/// (RFC 8484) or `httpdns` (EMAS HTTPDNS API).
///
/// A URL may carry credentials (`https://user:password@host/...`, `?token=...`). They never
/// leave through `description`, which is what logs and metric labels use: scheme, host, port
/// and path only. `text` is the full form, for the store and the upstream itself; `redactedText`
/// is what the admin API shows (credentials as `***`, which a PUT may send back to keep them).
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
        let parts = URLParts(url)
        guard let first = rest.first, first != "/", !parts.hostPort.isEmpty else {
            throw ConfigError(key: key, "upstream URL '\(parts.redacted)' has no host")
        }
        if let bad = url.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value >= 0x7F || Self.notInURLs.contains($0) }) {
            let shown = bad == " " ? "a space" : bad.value < 0x20 || bad.value == 0x7F ? "a control character" : "'\(bad)'"
            throw ConfigError(
                key: key, "upstream URL '\(Log.escaped(parts.redacted))' holds \(shown), which a URL cannot (percent-encode it)")
        }
        guard parts.hostAndPort != nil else {
            throw ConfigError(
                key: key,
                "upstream URL '\(parts.redacted)': '\(parts.hostPort)' is not a host name or IP address with an optional port (1-65535)")
        }
        self.kind = kind
        self.url = url
    }

    /// Characters RFC 3986 allows nowhere in a URL (besides spaces and controls).
    static let notInURLs: Set<Unicode.Scalar> = ["\"", "<", ">", "\\", "^", "`", "{", "|", "}"]

    /// `KIND:scheme://host[:port]/path`: no user information, query or fragment. For logs and
    /// metric labels.
    public var description: String { "\(kind.rawValue):\(URLParts(url).label)" }

    /// `KIND:URL` in full, credentials included: for the store and the config file only.
    public var text: String { "\(kind.rawValue):\(url)" }

    /// `KIND:URL` with the user information and the values of credential-like query arguments
    /// (`token`, `key`, `secret`, `password`, `sig`, `auth`... in the name) replaced by `***`.
    public var redactedText: String { "\(kind.rawValue):\(URLParts(url).redacted)" }

    /// True when `redactedText` hides something.
    public var hasCredentials: Bool { redactedText != text }
}

/// The parts of an `http(s)://` URL that redaction needs, split by hand (no Foundation URL: it
/// rejects some forms curl accepts, and this runs on configuration text only).
struct URLParts {
    var scheme: Substring
    var userInfo: Substring?
    var hostPort: Substring
    var path: Substring
    var query: Substring?
    var fragment: Substring?

    init(_ url: String) {
        var rest = Substring(url)
        if let range = rest.range(of: "://") {
            scheme = rest[..<range.lowerBound]
            rest = rest[range.upperBound...]
        } else {
            scheme = ""
        }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        rest = rest[authorityEnd...]
        if let at = authority.lastIndex(of: "@") {
            userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
        }
        hostPort = authority
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        path = rest
    }

    /// The host (an IP address, `[IPv6]` without brackets, or a host name) and the port (nil when
    /// not given); nil when either is not valid.
    var hostAndPort: (host: String, port: UInt16?)? {
        var host = hostPort
        var port: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let after = host[host.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { return nil }
            if after.hasPrefix(":") { port = after.dropFirst() }
            host = host[host.index(after: host.startIndex)..<close]
            guard IPAddress(String(host))?.family == .aaaa else { return nil }
        } else if let colon = host.lastIndex(of: ":") {
            port = host[host.index(after: colon)...]
            host = host[..<colon]
            guard IPAddress(String(host)) != nil || HostName(String(host)) != nil else { return nil }
        } else {
            guard IPAddress(String(host)) != nil || HostName(String(host)) != nil else { return nil }
        }
        guard let port else { return (String(host), nil) }
        guard port.allSatisfy(\.isASCII), let number = UInt16(port), number > 0 else { return nil }
        return (String(host), number)
    }

    /// `scheme://host[:port]/path`.
    var label: String { "\(scheme)://\(hostPort)\(path)" }

    /// The whole URL with credentials as `***`.
    var redacted: String {
        var text = "\(scheme)://"
        if userInfo != nil { text += "***@" }
        text += "\(hostPort)\(path)"
        if let query {
            let arguments = query.split(separator: "&", omittingEmptySubsequences: false).map { argument -> String in
                guard let equals = argument.firstIndex(of: "=") else { return String(argument) }
                let name = argument[..<equals]
                return Self.isCredentialName(name) ? "\(name)=***" : String(argument)
            }
            text += "?" + arguments.joined(separator: "&")
        }
        if let fragment { text += "#\(fragment)" }
        return text
    }

    /// Query argument names that carry credentials, by what they contain (case-insensitive).
    static let credentialWords = ["token", "key", "secret", "pass", "pwd", "sig", "auth", "credential", "session"]

    static func isCredentialName(_ name: Substring) -> Bool {
        let lowered = name.lowercased()
        return credentialWords.contains { lowered.contains($0) }
    }
}
