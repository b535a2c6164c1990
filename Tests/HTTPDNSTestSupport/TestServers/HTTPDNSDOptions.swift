/// How a test starts httpdnsd. The `default` account always gets `upstreams` and
/// `localDNSServers` through flags, so it can never fall back to the public built-in defaults.
public struct HTTPDNSDOptions: Sendable {
    /// `KIND:URL` upstreams of the default account (loopback only; dead ports are fine).
    public var upstreams: [String]
    /// `127.0.0.1:PORT` servers of the default account's local-DNS fallback (loopback only).
    public var localDNSServers: [String]
    /// Whether the default account falls back to `localDNSServers`.
    public var localDNSFallback: Bool
    /// Extra config file content (limits, more accounts); every account in it is checked for
    /// loopback upstreams and localDNSServers before the binary starts.
    public var config: TestJSON?
    /// Admin bearer token (`--admin-token`); nil leaves the admin API unconfigured (403).
    public var adminToken: String?
    /// SQLite file to use; nil means a new one in a fresh temp dir. Reuse it for warm restarts.
    public var databasePath: String?
    /// More command-line arguments, appended last.
    public var arguments: [String]
    /// More environment variables (`HTTPDNS_*`), checked like the config.
    public var environment: [String: String]
    /// `shutdownDrain` in seconds: 0 unless a test measures the drain, so that every test's stop
    /// does not wait the default 5 s.
    public var shutdownDrain: Double = 0
    /// Pass listen, db, upstreams, localDNSServers and localDNSFallback as `HTTPDNS_*`
    /// environment variables instead of flags (what `make run` does).
    public var viaEnvironment = false
    /// The setting the harness's own port is passed as (flag, environment variable). The harness
    /// waits for `/readyz` over plain HTTP on that port, so a test whose main listener serves
    /// HTTPS sets `("--listen-plain", "HTTPDNS_LISTEN_PLAIN")` and passes `--listen` itself.
    public var harnessListen: (flag: String, env: String) = ("--listen", "HTTPDNS_LISTEN")
    /// Settings that use extra loopback ports (see `withPorts`), applied in this order on each
    /// start attempt.
    var portSettings: [@Sendable (HTTPDNSDPorts, inout HTTPDNSDOptions) -> Void] = []

    public init(
        upstreams: [String], localDNSServers: [String], localDNSFallback: Bool = true,
        config: TestJSON? = nil, adminToken: String? = nil, databasePath: String? = nil,
        arguments: [String] = [], environment: [String: String] = [:]
    ) {
        self.upstreams = upstreams
        self.localDNSServers = localDNSServers
        self.localDNSFallback = localDNSFallback
        self.config = config
        self.adminToken = adminToken
        self.databasePath = databasePath
        self.arguments = arguments
        self.environment = environment
    }

    /// Adds settings that use extra loopback ports (ops, DNS, DoT or HTTPS listeners, config keys
    /// naming a port). The harness runs `settings` on a copy of these options on every start
    /// attempt with ports picked afresh for that attempt, as it picks its own port afresh: a port
    /// taken by someone else between the pick and httpdnsd's bind then costs one attempt, not the
    /// test. Read the ports of the started process with `HTTPDNSDProcess.port(named:)`.
    public mutating func withPorts(_ settings: @escaping @Sendable (HTTPDNSDPorts, inout HTTPDNSDOptions) -> Void) {
        portSettings.append(settings)
    }

    /// Passes `flag` (e.g. `--ops-listen`) with `127.0.0.1:PORT`, PORT being the port named `name`
    /// picked for each start attempt.
    public mutating func listen(_ flag: String, port name: String) {
        withPorts { ports, options in options.arguments += [flag, ports.address(name)] }
    }

    /// These options with the settings of `withPorts` applied for `ports`.
    func applyingPorts(_ ports: HTTPDNSDPorts) -> HTTPDNSDOptions {
        var applied = self
        applied.portSettings = []
        for settings in portSettings { settings(ports, &applied) }
        return applied
    }
}

/// The extra loopback ports of one start attempt, by name: a name's port is picked with
/// `freePort()` the first time it is asked for and stays the same for the rest of the attempt.
public final class HTTPDNSDPorts {
    private(set) var byName: [String: UInt16] = [:]

    init() {}

    /// The port named `name`.
    public subscript(_ name: String) -> UInt16 {
        if let port = byName[name] { return port }
        let port = freePort()
        byName[name] = port
        return port
    }

    /// `127.0.0.1:PORT` for the port named `name`.
    public func address(_ name: String) -> String { "127.0.0.1:\(self[name])" }
}
