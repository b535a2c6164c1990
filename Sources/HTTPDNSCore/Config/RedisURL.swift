import Foundation

/// Where the shared Redis is: `redis://[user:password@]host:port[/db]`.
///
/// The password is never part of `description` (logs, `--help`, errors show `redis://user:***@…`).
/// Only the `redis` scheme is accepted: no TLS (`rediss`) in hiredis 0.14 as Debian builds it,
/// and no Unix sockets.
public struct RedisURL: Sendable, Equatable, CustomStringConvertible {
    /// An IP address or a host name (resolved when connecting).
    public var host: String
    public var port: UInt16
    /// The ACL user of `AUTH user password` (nil: `AUTH password`, the `default` user).
    public var user: String?
    /// Nil: no `AUTH`.
    public var password: String?
    /// `SELECT db` after connecting (0: none sent).
    public var database: Int

    public init(host: String, port: UInt16, user: String? = nil, password: String? = nil, database: Int = 0) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
    }

    /// Parses `text`; errors name `key` and never repeat the password.
    public init(parsing text: String, key: String) throws(ConfigError) {
        let format = "must be redis://[user:password@]host:port[/db]"
        guard text.hasPrefix("redis://") else {
            let scheme = text.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
            let shown = text.contains("://") ? "the scheme '\(Log.escaped(scheme))'" : "a value without redis://"
            throw ConfigError(key: key, "\(format), got \(shown) (only redis:// is supported)")
        }
        var rest = Substring(text.dropFirst("redis://".count))
        var user: String?
        var password: String?
        // The last '@' ends the credentials: a password may contain '@' (percent-encode it anyway).
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            guard let colon = credentials.firstIndex(of: ":") else {
                throw ConfigError(key: key, "\(format): the part before '@' needs a ':' (user:password, or :password for the default user)")
            }
            let name = String(credentials[..<colon])
            let secret = String(credentials[credentials.index(after: colon)...])
            guard let decodedUser = name.removingPercentEncoding, let decodedPassword = secret.removingPercentEncoding else {
                throw ConfigError(key: key, "\(format): bad percent-encoding in the credentials")
            }
            guard !decodedPassword.isEmpty else { throw ConfigError(key: key, "\(format): the password is empty") }
            user = decodedUser.isEmpty ? nil : decodedUser
            password = decodedPassword
        }
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let digits = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            if !digits.isEmpty {
                guard let number = Int(digits), (0...1_000_000).contains(number) else {
                    throw ConfigError(key: key, "\(format): '/\(Log.escaped(String(digits)))' is not a database number")
                }
                database = number
            }
        }
        let host: Substring
        let portText: Substring
        switch HostPort.split(rest) {
        case .success(let parts): (host, portText) = (parts.host, parts.port)
        case .failure(.notBracketedWithPort):
            throw ConfigError(key: key, "\(format): '\(Log.escaped(String(rest)))' is not [IPv6]:port")
        case .failure(.noPort):
            throw ConfigError(key: key, "\(format): '\(Log.escaped(String(rest)))' has no port")
        }
        guard let port = UInt16(portText), port > 0 else {
            throw ConfigError(key: key, "\(format): '\(Log.escaped(String(portText)))' is not a port number (1-65535)")
        }
        guard IPAddress(String(host)) != nil || HostName(String(host)) != nil else {
            throw ConfigError(key: key, "\(format): '\(Log.escaped(String(host)))' is not an IP address or host name")
        }
        self.init(host: String(host), port: port, user: user, password: password, database: database)
    }

    /// The URL with the password masked: safe for logs and errors.
    public var description: String {
        var credentials = ""
        if password != nil { credentials = "\(user ?? ""):***@" }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "redis://\(credentials)\(shownHost):\(port)\(database == 0 ? "" : "/\(database)")"
    }
}
