/// Starts a loopback test server, trying up to `attempts` times: a port picked by `freePort()`
/// can be taken by someone else between the pick and the server's bind. Each attempt launches
/// afresh (new port, new directory); one that never answers is stopped before the next.
public func startRetrying<Server>(
    _ name: String, attempts: Int = 3,
    launch: () async throws -> Server,
    ready: (Server) async throws -> Void,
    stop: (Server) async -> Void
) async throws -> Server {
    var lastError: Error = HarnessError("\(name) did not start")
    for _ in 0..<attempts {
        let server = try await launch()
        do {
            try await ready(server)
            return server
        } catch {
            lastError = error
            await stop(server)
        }
    }
    throw lastError
}
