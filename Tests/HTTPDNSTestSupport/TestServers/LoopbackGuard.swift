import Foundation

/// Refuses test configurations that could make httpdnsd send traffic off this machine.
public enum LoopbackGuard {
    /// True for `127.x.y.z`, `localhost` and `::1` (with or without brackets).
    public static func isLoopbackHost(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: ["[", "]"])
        return bare.hasPrefix("127.") || bare == "localhost" || bare == "::1"
    }

    /// Checks one `KIND:URL` upstream.
    public static func checkUpstream(_ spec: String) throws {
        guard let schemeEnd = spec.range(of: "://") else { throw HarnessError("upstream '\(spec)' is not KIND:URL") }
        let authority = spec[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" }
        let host: Substring
        if authority.hasPrefix("[") {
            host = authority.prefix { $0 != "]" }.dropFirst()
        } else {
            host = authority.prefix { $0 != ":" }
        }
        guard isLoopbackHost(String(host)) else {
            throw HarnessError("refusing non-loopback upstream '\(spec)' in a test")
        }
    }

    /// Checks one `host:port` DNS server.
    public static func checkServer(_ server: String) throws {
        let host: Substring
        if server.hasPrefix("[") {
            host = server.prefix { $0 != "]" }.dropFirst()
        } else {
            host = server.split(separator: ":", maxSplits: 1).first ?? ""
        }
        guard isLoopbackHost(String(host)) else {
            throw HarnessError("refusing non-loopback DNS server '\(server)' in a test")
        }
    }

    /// Checks the default account's options and every account of the config file.
    public static func check(_ options: HTTPDNSDOptions) throws {
        guard !options.upstreams.isEmpty else { throw HarnessError("the default account needs upstreams") }
        try options.upstreams.forEach(checkUpstream)
        guard !options.localDNSServers.isEmpty else {
            throw HarnessError("the default account needs loopback localDNSServers (dead ports are fine)")
        }
        try options.localDNSServers.forEach(checkServer)
        if let upstreams = options.environment["HTTPDNS_UPSTREAMS"] {
            try upstreams.split(separator: ",").map(String.init).forEach(checkUpstream)
        }
        if let servers = options.environment["HTTPDNS_LOCALDNS_SERVERS"] {
            try servers.split(separator: ",").map(String.init).forEach(checkServer)
        }
        if let accounts = options.config?["accounts"]?.object {
            for (id, account) in accounts {
                try checkAccount(id: id, account)
            }
        }
    }

    /// Checks an account config object (also used for admin PUT bodies).
    public static func checkAccount(id: String, _ account: TestJSON) throws {
        guard let upstreams = account["upstreams"]?.strings, !upstreams.isEmpty else {
            throw HarnessError("account '\(id)' must list loopback upstreams in a test")
        }
        try upstreams.forEach(checkUpstream)
        let fallback = account["localDNSFallback"]?.bool ?? true
        if let servers = account["localDNSServers"]?.strings, !servers.isEmpty {
            try servers.forEach(checkServer)
        } else if fallback {
            throw HarnessError("account '\(id)' must set loopback localDNSServers or localDNSFallback:false")
        }
    }
}
