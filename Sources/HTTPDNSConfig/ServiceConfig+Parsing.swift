import Foundation
import HTTPDNSCore

/// The value checks of the settings: each parses one text or throws a `ConfigError` naming
/// the key.
extension ServiceConfig {
    /// A Redis key prefix: 1-64 of letters, digits and `-_.:{}` (braces allow a cluster hash tag).
    static func parseRedisPrefix(_ text: String, key: String) throws(ConfigError) -> String {
        let allowed = text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || "-_.:{}".utf8.contains(byte)
        }
        guard !text.isEmpty, text.utf8.count <= 64, allowed else {
            throw ConfigError(key: key, "must be 1-64 letters, digits or -_.:{}, got '\(Log.escaped(text))'")
        }
        return text
    }

    /// One advertised address: an IP address or a host name, optionally with a port
    /// (`192.0.2.1`, `192.0.2.1:8080`, `2001:db8::1`, `[2001:db8::1]:8080`, `dns.example.com:443`).
    static func parseAdvertised(_ text: String, key: String) throws(ConfigError) -> String {
        var host = Substring(text)
        var port: Substring?
        var bracketed = false
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let rest = text[text.index(after: close)...]
            bracketed = rest.isEmpty || rest.hasPrefix(":")
            host = text[text.index(after: text.startIndex)..<close]
            if rest.hasPrefix(":") { port = rest.dropFirst() }
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            port = text[text.index(after: colon)...]
            host = text[..<colon]
        }
        if text.hasPrefix("[") && (!bracketed || IPAddress(String(host))?.family != .aaaa) { host = "" }
        let validHost = IPAddress(String(host)) != nil || HostName(String(host)) != nil
        var validPort = true
        if let port { validPort = (UInt16(port) ?? 0) > 0 }
        guard validHost && validPort else {
            throw ConfigError(
                key: key,
                "'\(text)' is not an address or host name with an optional port (192.0.2.1:8080, [2001:db8::1]:8080, dns.example.com)")
        }
        return text
    }

    /// `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`, any case).
    static func parseBool(_ text: String, key: String) throws(ConfigError) -> Bool {
        switch text.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw ConfigError(key: key, "must be true or false")
        }
    }

    static func parseInt(_ text: String, key: String, range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw ConfigError(key: key, "must be a whole number between \(range.lowerBound) and \(range.upperBound), got '\(text)'")
        }
        return value
    }

    /// `10.0.0.0/8`, `::1/128`, or a plain address (a host route).
    static func parseCIDR(_ text: String, key: String) throws(ConfigError) -> CIDR {
        guard let cidr = CIDR(text.trimmingCharacters(in: .whitespaces)) else {
            throw ConfigError(key: key, "'\(text)' is not an IP address or a CIDR network with its host bits zero (10.0.0.0/8, ::1/128)")
        }
        return cidr
    }

    /// `127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:80`.
    static func parseListen(_ text: String, key: String) throws(ConfigError) -> (String, UInt16) {
        let host: Substring
        let port: Substring
        switch HostPort.split(text) {
        case .success(let parts): (host, port) = (parts.host, parts.port)
        case .failure(.notBracketedWithPort): throw ConfigError(key: key, "'\(text)' is not [IPv6]:port")
        case .failure(.noPort): throw ConfigError(key: key, "'\(text)' is not address:port")
        }
        guard let number = UInt16(port) else { throw ConfigError(key: key, "'\(port)' is not a port number (0-65535)") }
        guard IPAddress(String(host)) != nil else { throw ConfigError(key: key, "'\(host)' is not an IP address") }
        return (String(host), number)
    }
}
