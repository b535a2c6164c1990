import HTTPDNSCore

extension HTTPDNSService {
    /// `GET /v1/{account}/cache?host=H` (cache-only lookup) or `GET /v1/{account}/cache` (list).
    func cacheGet(_ request: HTTPRequest, engine: ResolverEngine) -> HTTPResponse {
        guard request.query["host"] != nil else { return cacheList(request, engine: engine) }
        let query: HostQuery
        switch parseHostQuery(request, maxHosts: limits.maxHostsPerResolve) {
        case .success(let parsed): query = parsed
        case .failure(let error): return error.response
        }
        let allowExpired = request.query["expired"].map { $0 == "1" || $0 == "true" } ?? false
        let families = query.type.families(ipv6Enabled: engine.config.ipv6Enable)
        let network = clientNetwork(of: request)
        var results: [HostResult] = []
        for host in query.hosts {
            let found = families.compactMap { family -> (RecordFamily, FamilyOutcome)? in
                engine.cachedAnswer(host: host, family: family, network: network, allowExpired: allowExpired).map { (family, .success($0)) }
            }
            if found.isEmpty && !query.batch {
                return APIError(.notFound, "\(host.value) is not in the cache\(allowExpired ? "" : " (or has expired; add expired=1)")").response
            }
            if !found.isEmpty { results.append(HostResult(host: host, families: found)) }
        }
        return AnswerRendering.response(results, batch: query.batch, short: query.short ?? engine.config.shortEnable)
    }

    /// Pages through the cache in (host, family, network) order; the cursor is the last key returned.
    func cacheList(_ request: HTTPRequest, engine: ResolverEngine) -> HTTPResponse {
        var limit = 100
        if let text = request.query["limit"] {
            guard let value = Int(text), (1...limits.maxCacheListLimit).contains(value) else {
                return APIError(.invalidParameter, "limit must be 1-\(limits.maxCacheListLimit), got '\(text)'").response
            }
            limit = value
        }
        var after: (String, UInt16, String)?
        if let text = request.query["cursor"], !text.isEmpty {
            let parts = text.split(separator: ",", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, let family = UInt16(parts[1]) else {
                return APIError(.invalidParameter, "cursor '\(text)' was not returned by this endpoint").response
            }
            after = (String(parts[0]), family, String(parts[2]))
        }
        let now = engine.now
        let entries = engine.cachedEntries()
        let start = after.map { after in
            entries.firstIndex { ($0.0.host.value, $0.0.family.rawValue, $0.0.network) > after } ?? entries.count
        } ?? 0
        let page = entries[start..<min(entries.count, start + limit)]
        var writer = JSONWriter(capacity: 128 * page.count + 64)
        writer.raw("{")
        writer.key("entries")
        writer.raw("[")
        for (index, (key, entry)) in page.enumerated() {
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
        if start + limit < entries.count, let last = page.last {
            writer.string(Self.cursor(of: last.0))
        } else {
            writer.raw("null")
        }
        writer.raw("}")
        return .json(200, writer)
    }

    /// `host,family,network` of the last entry of a page; the next page starts after it in the
    /// order of `ResolverEngine.cachedEntries`.
    static func cursor(of key: CacheKey) -> String {
        "\(key.host.value),\(key.family.rawValue),\(key.network)"
    }

    /// `DELETE /v1/{account}/cache[?host=H]`.
    func cacheDelete(_ request: HTTPRequest, engine: ResolverEngine) -> HTTPResponse {
        let deleted: Int
        if let text = request.query["host"] {
            guard let host = HostName(text) else {
                return APIError(.invalidHost, "'\(text)' is not a valid host name").response
            }
            deleted = engine.evict(host: host)
        } else {
            deleted = engine.evictAll()
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
