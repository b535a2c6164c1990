import Foundation
import HTTPDNSCore
import Synchronization

/// One question to every configured upstream at start-up, so that an operator learns when none
/// can be reached: offline, or behind a firewall, with the public default upstreams, every
/// resolve fails while `/readyz` says ready. It runs once the listeners serve and before the
/// service reports ready (no request waits for it), bounded by `maxTimeoutMilliseconds`, so
/// that its queries are over before anything counts on the upstreams' traffic. An upstream answers when it replies at all (an address, NXDOMAIN, even
/// a DNS or HTTP error status: it is reachable); it does not when the reply never comes (a
/// timeout) or the connection fails (`transport`).
enum UpstreamProbe {
    /// A name under `.invalid` (RFC 6761): no resolver has records for it, and asking for it
    /// tells nobody anything.
    static let probeName = HostName("httpdnsd-probe.invalid")!
    /// The longest any one probe may take, whatever the account's `timeout`.
    static let maxTimeoutMilliseconds = 3000

    /// Probes each distinct upstream of `accounts` (sent with the first account that names it)
    /// and logs the outcome: a warning naming the setting to change when no upstream answers.
    static func run(accounts: [(id: String, config: AccountConfig)], wiring: UpstreamWiring) {
        var seen: Set<String> = []
        var probes: [(resolver: any UpstreamResolver, timeout: Int)] = []
        for (id, config) in accounts {
            for spec in config.upstreams where seen.insert(spec.description).inserted {
                let resolver = wiring.upstream(spec, accountID: id, config: config)
                probes.append((resolver, min(config.timeoutMilliseconds, maxTimeoutMilliseconds)))
            }
        }
        guard !probes.isEmpty else { return }
        report(probe(probes))
    }

    /// Each upstream's name and, when it did not answer, why.
    static func probe(_ probes: [(resolver: any UpstreamResolver, timeout: Int)]) -> [(name: String, failure: String?)] {
        let results = Mutex<[Int: String?]>([:])
        let done = DispatchSemaphore(value: 0)
        for (index, probe) in probes.enumerated() {
            let query = UpstreamQuery(host: probeName, family: .a, timeoutMilliseconds: probe.timeout)
            probe.resolver.resolve(query) { result in
                var failure: String?
                if case .failure(let error) = result, error.code == .timeout || error.code == .transport {
                    failure = error.description
                }
                results.withLock { $0[index] = failure }
                done.signal()
            }
        }
        // Every adapter calls back within its timeout; the deadline only guards against one that
        // does not.
        let deadline = DispatchTime.now() + .milliseconds(maxTimeoutMilliseconds + 1000)
        for _ in probes where done.wait(timeout: deadline) == .timedOut { break }
        let finished = results.withLock { $0 }
        return probes.enumerated().map { index, probe in
            (probe.resolver.name, finished[index] ?? "timeout: no reply to the start-up probe")
        }
    }

    static func report(_ outcomes: [(name: String, failure: String?)]) {
        let answered = outcomes.filter { $0.failure == nil }.count
        guard answered == 0 else {
            Log.info("upstreams: \(answered) of \(outcomes.count) answered the start-up probe")
            return
        }
        let reasons = outcomes.map { "\($0.name): \($0.failure ?? "")" }.joined(separator: "; ")
        Log.warning(
            "upstreams: none of the \(outcomes.count) configured upstreams answered the start-up probe (\(reasons)); "
                + "resolves fail unless the local DNS fallback answers. Point the upstreams at resolvers this machine "
                + "can reach: HTTPDNS_UPSTREAMS or --upstreams for the default account, an account's \"upstreams\" "
                + "in the config file")
    }
}
