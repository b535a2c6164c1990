import HTTPDNSCore
import HTTPDNSServer
import HTTPDNSUpstream
import Synchronization

/// Builds each account's upstream chain over one shared curl event loop, with one system
/// resolver (c-ares channel and thread) per distinct list of fallback servers, and one speed
/// tester (one prober thread) for every account that runs the speed test.
final class UpstreamWiring: Sendable {
    private let loop = CurlEventLoop()
    let speedTester = SocketSpeedTester()
    private let systemResolvers = Mutex<[[String]: SystemResolver]>([:])

    func chain(accountID: String, config: AccountConfig) -> UpstreamChain {
        let upstreams = config.upstreams.map { upstream($0, accountID: accountID, config: config) }
        let fallback: (any UpstreamResolver)? = config.localDNSFallback ? systemResolver(config.localDNSServers) : nil
        return UpstreamChain(upstreams: upstreams, fallback: fallback)
    }

    /// The adapter for one `upstreams` entry of an account, on the shared curl loop.
    func upstream(_ spec: UpstreamSpec, accountID: String, config: AccountConfig) -> any UpstreamResolver {
        UpstreamFactory.make(spec, accountID: accountID, config: config, loop: loop)
    }

    /// Lets the HTTP front's threads carry this loop's HTTP/1.1 client (see
    /// `CurlEventLoop.localClient(on:)`): a miss's upstream exchange runs on the thread that read
    /// the request.
    func carryUpstreamClient(_ options: inout HTTPServerOptions) {
        options.loopGuest = { [loop] sockets in loop.localClient(on: sockets) }
    }

    private func systemResolver(_ servers: [String]) -> SystemResolver {
        systemResolvers.withLock { table in
            if let existing = table[servers] { return existing }
            let resolver = SystemResolver(servers: servers)
            table[servers] = resolver
            return resolver
        }
    }

    func shutdown() {
        speedTester.shutdown()
        loop.shutdown()
        for resolver in systemResolvers.withLock({ Array($0.values) }) { resolver.shutdown() }
    }
}
