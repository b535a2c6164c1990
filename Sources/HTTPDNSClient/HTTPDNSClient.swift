import Foundation

/// Resolves names through httpdnsd services (the v1 API), as the HTTPDNS SDKs do inside apps:
/// a local cache that keeps each answer for its TTL, optional reuse of an expired answer while
/// it is refreshed, failover across several services, the system resolver as the last resort,
/// signatures (v1) that survive a wrong device clock, and optionally requests and answers
/// encrypted with the account's AES key (`encryptionKey`, docs/encryption.md).
///
///     let client = HTTPDNSClient(configuration: .init(
///         services: [URL(string: "https://httpdns.example.net")!], account: "shop",
///         credentials: HTTPDNSCredentials(keyID: "app1", secret: secret)))
///     let answer = try await client.resolve("www.example.com")
///     // connect to answer.addresses[0], keeping www.example.com as Host and TLS server name
///
/// An actor: one client may be shared by every task of an app.
public actor HTTPDNSClient {
    public let configuration: HTTPDNSClientConfiguration
    let transport: any HTTPDNSTransport
    let clock: any HTTPDNSClock
    let systemResolver: any HTTPDNSSystemResolver

    /// Answers by lower-cased name, with when they expire (on `clock`).
    var cache: [String: (answer: HTTPDNSAnswer, expires: Date)] = [:]
    /// The services' clock minus `clock`, learned from each reply's `Date` header.
    var clockOffset: TimeInterval = 0
    /// The index in `configuration.services` to try first: the one that answered last.
    var preferredService = 0
    /// Background refreshes of expired answers under way, by lower-cased name.
    var refreshes: [String: Task<Void, Never>] = [:]

    public init(
        configuration: HTTPDNSClientConfiguration, transport: any HTTPDNSTransport = URLSessionTransport(),
        clock: any HTTPDNSClock = SystemHTTPDNSClock(), systemResolver: any HTTPDNSSystemResolver = GetAddrInfoResolver()
    ) {
        self.configuration = configuration
        self.transport = transport
        self.clock = clock
        self.systemResolver = systemResolver
    }

    /// The service's clock minus this device's, as last learned (0 until a service answered).
    public var serviceClockOffset: TimeInterval { clockOffset }

    /// The addresses of `host`: from the cache while its TTL lasts, else from a service, else
    /// (when `systemResolverFallback`) from the system resolver.
    public func resolve(_ host: String) async throws(HTTPDNSClientError) -> HTTPDNSAnswer {
        try await resolve([host])[0].get()
    }

    /// The addresses of each of `hosts`, in order; the names not cached are asked in one
    /// request per 20 names. A name that could not be resolved is a failure of its own.
    public func resolve(_ hosts: [String]) async -> [Result<HTTPDNSAnswer, HTTPDNSClientError>] {
        let now = clock.now()
        var results: [Result<HTTPDNSAnswer, HTTPDNSClientError>?] = Array(repeating: nil, count: hosts.count)
        var missing: [String] = []
        for (index, host) in hosts.enumerated() {
            guard let cached = cache[host.lowercased()] else {
                missing.append(host)
                continue
            }
            var answer = cached.answer
            answer.host = host
            if cached.expires > now {
                answer.source = .cache
                answer.ttl = Int(cached.expires.timeIntervalSince(now).rounded(.down))
                results[index] = .success(answer)
            } else if configuration.reuseExpiredAnswers {
                answer.source = .stale
                answer.ttl = 0
                results[index] = .success(answer)
                startRefresh(host)
            } else {
                missing.append(host)
            }
        }
        let fetched = await resolveMissing(missing)
        for (index, host) in hosts.enumerated() where results[index] == nil {
            results[index] = fetched[host.lowercased()] ?? .failure(.badReply("no answer for \(host)"))
        }
        return results.map { $0! }
    }

    /// Forgets every cached answer.
    public func clearCache() {
        cache.removeAll()
    }

    /// Waits until the background refreshes started so far are done (tests, and apps that
    /// want a refreshed answer before they go on).
    public func waitForRefreshes() async {
        while let (_, task) = refreshes.first {
            await task.value
        }
    }

    /// Resolves `hosts` through the services, 20 names a request, then the system resolver
    /// for any name no service answered.
    func resolveMissing(_ hosts: [String]) async -> [String: Result<HTTPDNSAnswer, HTTPDNSClientError>] {
        var results: [String: Result<HTTPDNSAnswer, HTTPDNSClientError>] = [:]
        var unique: [String] = []
        for host in hosts where !unique.contains(where: { $0.lowercased() == host.lowercased() }) { unique.append(host) }
        var start = 0
        while start < unique.count {
            let chunk = Array(unique[start..<min(start + 20, unique.count)])
            start += chunk.count
            do {
                for (host, outcome) in try await fetchFromServices(chunk) {
                    results[host.lowercased()] = outcome
                }
            } catch {
                for host in chunk { results[host.lowercased()] = .failure(error) }
            }
        }
        for host in unique {
            guard configuration.systemResolverFallback, case .failure(let error) = results[host.lowercased()],
                let failures = Self.systemResolverAnswers(error)
            else { continue }
            results[host.lowercased()] = await resolveBySystem(host, failures: failures)
        }
        return results
    }

    /// The failures to report when `error` leaves a name to the system resolver: no service
    /// answered, or the account does not resolve the name through HTTPDNS (`DomainNotAllowed`, the
    /// tenant's domain list: the name is meant for the device's own DNS, as EMAS SDKs take an
    /// empty answer). Nil for an error the system resolver must not paper over.
    static func systemResolverAnswers(_ error: HTTPDNSClientError) -> [String]? {
        switch error {
        case .unavailable(let failures, _): failures
        case .refused(_, let code, let message) where code == domainNotAllowed: ["\(code): \(message)"]
        default: nil
        }
    }

    /// The v1 API's code for a name the account's domain list refuses.
    static let domainNotAllowed = "DomainNotAllowed"

    func resolveBySystem(_ host: String, failures: [String]) async -> Result<HTTPDNSAnswer, HTTPDNSClientError> {
        do {
            let addresses = try await systemResolver.resolve(host)
            return .success(
                HTTPDNSAnswer(
                    host: host, ipv4: addresses.filter { !$0.contains(":") }, ipv6: addresses.filter { $0.contains(":") },
                    ttl: 0, source: .system))
        } catch {
            return .failure(.unavailable(failures: failures, system: "\(error)"))
        }
    }

    /// Starts one background refresh of `host` unless one is under way.
    func startRefresh(_ host: String) {
        let key = host.lowercased()
        guard refreshes[key] == nil else { return }
        refreshes[key] = Task {
            _ = await self.resolveMissing([host])
            self.refreshes[key] = nil
        }
    }

    /// Keeps `answer` for its TTL (an answer with TTL 0 is not kept).
    func remember(_ answer: HTTPDNSAnswer) {
        guard answer.ttl > 0 else { return }
        cache[answer.host.lowercased()] = (answer, clock.now().addingTimeInterval(TimeInterval(answer.ttl)))
    }
}
