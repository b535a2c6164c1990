/// The loopback DNS stack of the integration tests: unbound with `TestZone`, dnss (DoH) and
/// the JSON-API responder in front of it.
public final class TestServers: Sendable {
    public let unbound: TestUnbound
    public let dnss: TestDNSS
    public let json: TestJSONResponder

    private init(unbound: TestUnbound, dnss: TestDNSS, json: TestJSONResponder) {
        self.unbound = unbound
        self.dnss = dnss
        self.json = json
    }

    /// Starts all three; stops what it started if one fails.
    public static func start() async throws -> TestServers {
        let unbound = try await TestUnbound.start()
        do {
            async let dnss = TestDNSS.start(dnsPort: unbound.port)
            async let json = TestJSONResponder.start(dnsPort: unbound.port)
            let started: (TestDNSS?, TestJSONResponder?)
            do {
                started = (try await dnss, try await json)
            } catch {
                await (try? await dnss)?.stop()
                await (try? await json)?.stop()
                throw error
            }
            return TestServers(unbound: unbound, dnss: started.0!, json: started.1!)
        } catch {
            await unbound.stop()
            throw error
        }
    }

    /// Stops all three. Idempotent.
    public func stop() async {
        await json.stop()
        await dnss.stop()
        await unbound.stop()
    }

    /// Options for httpdnsd whose default account uses `upstreams` (default: dnss) and falls
    /// back to unbound.
    public func options(upstreams: [String]? = nil, localDNSFallback: Bool = true) -> HTTPDNSDOptions {
        HTTPDNSDOptions(
            upstreams: upstreams ?? [dnss.upstreamSpec], localDNSServers: [unbound.address],
            localDNSFallback: localDNSFallback)
    }
}

/// Runs `body` with freshly started `TestServers`, stopping them on every path. At most
/// `ServerStackGate.shared` stacks run at once; do not nest calls.
public func withTestServers<T>(_ body: (TestServers) async throws -> T) async throws -> T {
    await ServerStackGate.shared.acquire()
    let servers: TestServers
    do {
        servers = try await TestServers.start()
    } catch {
        await ServerStackGate.shared.release()
        throw error
    }
    do {
        let result = try await body(servers)
        await servers.stop()
        await ServerStackGate.shared.release()
        return result
    } catch {
        await servers.stop()
        await ServerStackGate.shared.release()
        throw error
    }
}

/// Runs `body` with httpdnsd started from `options`, stopping it on every path.
public func withHTTPDNSD<T>(_ options: HTTPDNSDOptions, _ body: (HTTPDNSDProcess) async throws -> T) async throws -> T {
    let server = try await HTTPDNSDProcess.start(options)
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

/// Runs `body` with an extra JSON/EMAS responder in front of `servers`' unbound (e.g. one that
/// demands signatures), stopping it on every path.
public func withJSONResponder<T>(
    _ servers: TestServers, jsonSecret: String? = nil, httpdnsSecret: String? = nil,
    _ body: (TestJSONResponder) async throws -> T
) async throws -> T {
    let responder = try await TestJSONResponder.start(
        dnsPort: servers.unbound.port, jsonSecret: jsonSecret,
        httpdnsSecret: httpdnsSecret)
    do {
        let result = try await body(responder)
        await responder.stop()
        return result
    } catch {
        await responder.stop()
        throw error
    }
}
