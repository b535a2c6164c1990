import Foundation
import HTTPDNSCore

/// `POST /v1/{account}/preload`.
struct PreloadHandler: Sendable {
    /// The most hosts one preload may name (`maxPreloadHosts`).
    let maxHosts: Int
    /// How many of them are resolved at once.
    let concurrency: Int
    let clients: ClientRules
    let state: ServiceState

    /// `POST /v1/{account}/preload` with `{"hosts":[...],"type":"auto"}`: resolves every host with
    /// bounded concurrency, asks the store to commit the answers and then answers with each host's
    /// outcome and whether it is durable (`persisted` per host, `durable` for the whole request).
    /// A store that cannot commit does not hold the reply back: it is answered from memory with
    /// `"durable":false`.
    /// Any invalid host rejects the whole request before anything is resolved. For accounts with
    /// `ispEnable` the answers are for the requester's client network (`client_ip` or the peer).
    func preload(_ request: HTTPRequest, engine: ResolverEngine) throws(APIError) -> HandlerResult {
        let object: [String: Any]
        do {
            // The reader of configuration and admin bodies: a key given twice is refused too.
            object = try parseJSONObject(Data(request.body), key: "body")
        } catch {
            throw APIError(.invalidBody, "\(error.description) (a JSON object {\"hosts\":[...]})")
        }
        if let unknown = object.keys.sorted().first(where: { $0 != "hosts" && $0 != "type" }) {
            throw APIError(.invalidBody, "unknown key '\(unknown)' (known: hosts, type)")
        }
        guard let list = object["hosts"] as? [Any], !list.isEmpty else {
            throw APIError(.missingArgument, "'hosts' must be a non-empty array of host names")
        }
        guard list.count <= maxHosts else {
            throw APIError(.tooManyHosts, "at most \(maxHosts) hosts per preload, got \(list.count)")
        }
        var hosts: [HostName] = []
        var seen = Set<HostName>()
        for item in list {
            guard let text = item as? String, let host = HostName(text) else {
                // A JSON string may hold any control character (`\u0000`): shown escaped.
                let shown = (item as? String).map { DecodedArgument.shown($0.utf8) } ?? "\(item)"
                throw APIError(.invalidHost, "'\(shown)' is not a valid host name (RFC 1035; IDN must be punycode)")
            }
            if seen.insert(host).inserted { hosts.append(host) }
        }
        var type = QueryType.auto
        if let value = object["type"] {
            guard let text = value as? String, let parsed = QueryType(parameter: text) else {
                throw APIError(.invalidParameter, "type must be A, AAAA, auto or both")
            }
            type = parsed
        }
        if let clientIP = request.query["client_ip"], IPAddress(clientIP) == nil {
            throw APIError(.invalidParameter, "client_ip '\(clientIP)' is not an IP address")
        }
        let families = type.families(ipv6Enabled: engine.config.ipv6Enable)
        // Every other replica resolves the same hosts (published through Redis, best effort).
        state.replication?.publish(
            account: engine.accountID, change: .preload(hosts: hosts, families: families, network: clients.network(of: request)))
        let slot = ReplySlot()
        let started = MonotonicClock.nanoseconds()
        // For accounts with ispEnable the answers are cached for the requester's network.
        Preloader.start(
            engine: engine, hosts: hosts, families: families, concurrency: concurrency,
            network: clients.network(of: request)
        ) { outcomes in
            let elapsed = MonotonicClock.nanoseconds() &- started
            engine.metrics.preloadDurations.withLock { $0.record(nanoseconds: elapsed) }
            engine.persisted { flushed in
                slot.set(Self.preloadResponse(outcomes, flushed: flushed, persists: engine.persists))
                MemoryTrim.afterBulkWork()
            }
        }
        return slot.result
    }

    /// The reply: per host its outcome and `persisted` (its answers are in the database: the
    /// store committed and `persists` says the engine wrote them), then `resolved`, `failed`,
    /// `durable` (everything the preload wrote is committed) and, when not, `store_error`.
    static func preloadResponse(
        _ outcomes: [PreloadOutcome], flushed: FlushOutcome, persists: (ResolvedAnswer) -> Bool
    ) -> HTTPResponse {
        var writer = JSONWriter(capacity: 96 * outcomes.count + 64)
        var resolved = 0
        writer.raw("{")
        writer.key("results")
        writer.raw("[")
        for (index, outcome) in outcomes.enumerated() {
            if index > 0 { writer.comma() }
            let result = HostResult(host: outcome.host, families: outcome.results)
            writer.raw("{")
            writer.key("host")
            writer.string(outcome.host.value)
            writer.comma()
            writer.key("ok")
            writer.bool(outcome.ok)
            if outcome.ok {
                resolved += 1
                let answers = result.answers
                AnswerRendering.writeAddresses(answers, to: &writer)
                if answers.contains(where: { $0.1.nxdomain }) {
                    writer.comma()
                    writer.key("nxdomain")
                    writer.bool(true)
                } else if AnswerRendering.isNoData(answers.map(\.1)) {
                    writer.comma()
                    writer.key("nodata")
                    writer.bool(true)
                }
            } else {
                let failure = outcome.results.compactMap { if case .failure(let f) = $0.1 { f } else { nil } }.first!
                writer.comma()
                writer.key("error")
                APIError(failure, host: outcome.host).write(to: &writer)
            }
            writer.comma()
            writer.key("persisted")
            writer.bool(
                outcome.ok && flushed.isDurable
                    && outcome.results.allSatisfy {
                        if case .success(let answer) = $0.1 { persists(answer) } else { false }
                    })
            writer.raw("}")
        }
        writer.raw("]")
        writer.comma()
        writer.key("resolved")
        writer.number(resolved)
        writer.comma()
        writer.key("failed")
        writer.number(outcomes.count - resolved)
        writer.comma()
        writer.key("durable")
        writer.bool(flushed.isDurable)
        if case .failed(let reason) = flushed {
            writer.comma()
            writer.key("store_error")
            writer.string(reason)
        }
        writer.raw("}")
        return .json(200, writer)
    }
}
