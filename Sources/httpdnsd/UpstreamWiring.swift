import HTTPDNSCore
import HTTPDNSUpstream
import Synchronization

/// Builds each account's upstream chain over one shared curl event loop, with one system
/// resolver (c-ares channel and thread) per distinct list of fallback servers.
final class UpstreamWiring: Sendable {
    private let loop = CurlEventLoop()
    private let systemResolvers = Mutex<[[String]: SystemResolver]>([:])

    func chain(accountID: String, config: AccountConfig) -> UpstreamChain {
        let upstreams = config.upstreams.map { make($0, accountID: accountID, config: config) }
        let fallback: (any UpstreamResolver)? = config.localDNSFallback ? systemResolver(config.localDNSServers) : nil
        return UpstreamChain(upstreams: upstreams, fallback: fallback)
    }

    private func make(_ spec: UpstreamSpec, accountID: String, config: AccountConfig) -> any UpstreamResolver {
        switch spec.kind {
        case .json:
            DoHJSONClient(
                url: spec.url, loop: loop, accountID: accountID,
                accessKeyId: config.accessKeyId, accessKeySecret: config.accessKeySecret)
        case .doh, .httpdns:
            DoHWireClient(url: spec.url, loop: loop)
        }
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
        loop.shutdown()
        for resolver in systemResolvers.withLock({ Array($0.values) }) { resolver.shutdown() }
    }
}
