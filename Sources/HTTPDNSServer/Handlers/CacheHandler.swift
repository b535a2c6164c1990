import HTTPDNSCore

/// `GET`, `DELETE /v1/{account}/cache` and `POST /v1/{account}/cache/refresh`.
struct CacheHandler: Sendable {
    /// The most hosts one lookup may name.
    let maxHosts: Int
    /// The largest page of the listing.
    let maxListLimit: Int
    let clients: ClientRules
    let state: ServiceState

    /// `GET /v1/{account}/cache?host=H` (cache-only lookup) or `GET /v1/{account}/cache` (list).
    /// A host the account's `domains` refuses is `DomainNotAllowed` (403; in a batch, its
    /// element's error), as `resolve` answers it, even while an entry for it is still cached.
    func cacheGet(_ request: HTTPRequest, engine: ResolverEngine) throws(APIError) -> HTTPResponse {
        guard request.query["host"] != nil else { return try cacheList(request, engine: engine) }
        let query = try ResolveHandler.parseHostQuery(request, maxHosts: maxHosts).get()
        let allowExpired = request.query["expired"].map { $0 == "1" || $0 == "true" } ?? false
        let families = query.type.families(ipv6Enabled: engine.config.ipv6Enable)
        let network = clients.network(of: request)
        var results: [HostResult] = []
        let checksNames = engine.lookupOptions.hasDomainPolicy
        for host in query.hosts {
            if checksNames && !engine.allows(host) {
                results.append(HostResult(host: host, families: families.map { ($0, .failure(.notAllowed(host))) }))
                continue
            }
            let found = families.compactMap { family -> (RecordFamily, FamilyOutcome)? in
                engine.cachedAnswer(host: host, family: family, network: network, allowExpired: allowExpired).map { (family, .success($0)) }
            }
            if found.isEmpty && !query.batch {
                return APIError(.notFound, "\(host.value) is not in the cache\(allowExpired ? "" : " (or has expired; add expired=1)")")
                    .response
            }
            if !found.isEmpty { results.append(HostResult(host: host, families: found)) }
        }
        return AnswerRendering.response(results, batch: query.batch, short: query.short ?? engine.config.shortEnable)
    }

    /// Pages through the cache in shard and slot order (`AnswerCache.page`): each call does
    /// O(limit) work whatever the cache's size; the cursor is an opaque position (`PageCursor`).
    func cacheList(_ request: HTTPRequest, engine: ResolverEngine) throws(APIError) -> HTTPResponse {
        var limit = 100
        if let text = request.query["limit"] {
            guard let value = Int(text), (1...maxListLimit).contains(value) else {
                throw APIError(.invalidParameter, "limit must be 1-\(maxListLimit), got '\(text)'")
            }
            limit = value
        }
        var position = AnswerCache.Position.start
        if let text = request.query["cursor"], !text.isEmpty {
            guard let numbers = PageCursor.decode(text, .cache, account: engine.accountID, count: 2) else {
                throw APIError(.invalidParameter, "cursor '\(text)' was not returned by this endpoint for this account")
            }
            position = AnswerCache.Position(shard: numbers[0], slot: numbers[1])
        }
        let now = engine.now
        let (page, next) = engine.cachePage(from: position, limit: limit, scanLimit: PageCursor.scanLimit(limit))
        var writer = JSONWriter(capacity: 128 * page.count + 64)
        writer.raw("{")
        writer.key("entries")
        writer.raw("[")
        for (index, (key, entry, _)) in page.enumerated() {
            if index > 0 { writer.comma() }
            writer.raw("{")
            writer.key("host")
            writer.string(key.host.value)
            writer.comma()
            writer.key("type")
            writer.string(key.family.typeName)
            if !key.network.isEmpty {
                writer.comma()
                writer.key("network")
                writer.string(key.network)
            }
            writer.comma()
            writer.key("ips")
            writer.stringArray(entry.addresses)
            writer.comma()
            writer.key("ttl")
            writer.number(entry.remainingTTL(at: now))
            writer.comma()
            writer.key("origin_ttl")
            writer.number(entry.originTTL)
            writer.comma()
            writer.key("expired")
            writer.bool(entry.isExpired(at: now))
            writer.comma()
            writer.key("nxdomain")
            writer.bool(entry.nxdomain)
            writer.comma()
            writer.key("source")
            writer.string(entry.origin.rawValue)
            writer.raw("}")
        }
        writer.raw("]")
        writer.comma()
        writer.key("next_cursor")
        if let next {
            writer.string(PageCursor.encode(.cache, account: engine.accountID, [next.shard, next.slot]))
        } else {
            writer.raw("null")
        }
        writer.raw("}")
        return .json(200, writer)
    }

    /// `DELETE /v1/{account}/cache[?host=H]`. With replicas sharing their state, every other
    /// replica repeats the eviction (published through Redis, best effort).
    func cacheDelete(_ request: HTTPRequest, engine: ResolverEngine) throws(APIError) -> HTTPResponse {
        let deleted: Int
        if let text = request.query["host"] {
            guard let host = HostName(text) else {
                throw APIError(.invalidHost, "'\(text)' is not a valid host name")
            }
            deleted = engine.evict(host: host)
            state.replication?.publish(account: engine.accountID, change: .evict(host))
        } else {
            deleted = engine.evictAll()
            state.replication?.publish(account: engine.accountID, change: .evictAll)
            // The entries' memory goes back to the system, not only to malloc's free lists.
            if deleted > 0 { MemoryTrim.inBackground() }
        }
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("deleted")
        writer.number(deleted)
        writer.raw("}")
        return .json(200, writer)
    }

    /// `POST /v1/{account}/cache/refresh`: re-resolves every cached entry in the background
    /// (bounded concurrency); answers 202 with how many entries were queued.
    func cacheRefresh(_ engine: ResolverEngine) -> HTTPResponse {
        let queued = engine.refreshAll()
        Log.info("account \(engine.accountID): refresh of \(queued) cached entries requested through the API")
        var writer = JSONWriter(capacity: 32)
        writer.raw("{")
        writer.key("refreshing"); writer.number(queued)
        writer.raw("}")
        return .json(202, writer)
    }
}
