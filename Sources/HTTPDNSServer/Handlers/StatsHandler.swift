import HTTPDNSCore

/// `GET /v1/{account}/stats`: the statistics record of each name, paged.
struct StatsHandler: Sendable {
    /// `GET /v1/{account}/stats`: the SDK's `getRequestReportInfo` array (WIRE-FORMATS §4), one
    /// record per (domain, family, network), every key, `avgRtt`/`maxRtt` as strings, plus the
    /// extra keys `staleNum`, `prefetchNum` and `ruleNum`. Paged: at most `limit` records (default
    /// `statsPageDefault`, at most `statsPageMax`) in the order their keys were first seen; the
    /// body stays the SDK's array, and the `X-Next-Cursor` header, when present, is the `cursor`
    /// of the next page. `domain=H` reads the records of one name (every family and network).
    func stats(_ request: HTTPRequest, engine: ResolverEngine) throws(APIError) -> HTTPResponse {
        var limit = Self.statsPageDefault
        if let text = request.query["limit"] {
            guard let value = Int(text), (1...Self.statsPageMax).contains(value) else {
                throw APIError(.invalidParameter, "limit must be 1-\(Self.statsPageMax), got '\(text)'")
            }
            limit = value
        }
        let cursor = request.query["cursor"].flatMap { $0.isEmpty ? nil : $0 }
        let records: [(StatsKey, DomainStats)]
        var next: String?
        if let text = request.query["domain"] {
            guard let domain = HostName(text) else {
                throw APIError(.invalidHost, "'\(text)' is not a valid host name")
            }
            var offset = 0
            if let cursor {
                guard let numbers = PageCursor.decode(cursor, .statsDomain, account: engine.accountID, filter: domain.value, count: 1)
                else {
                    throw APIError(.invalidParameter, "cursor '\(cursor)' was not returned by this endpoint for this account and domain")
                }
                offset = numbers[0]
            }
            let all = engine.stats.records(domain: domain)
            let start = min(offset, all.count)
            let end = min(all.count, start + limit)
            records = Array(all[start..<end])
            if end < all.count { next = PageCursor.encode(.statsDomain, account: engine.accountID, filter: domain.value, [end]) }
        } else {
            var position = EngineStats.Position.start
            if let cursor {
                guard let numbers = PageCursor.decode(cursor, .stats, account: engine.accountID, count: 4) else {
                    throw APIError(.invalidParameter, "cursor '\(cursor)' was not returned by this endpoint for this account")
                }
                position = EngineStats.Position(inCache: numbers[0] == 1, shard: numbers[1], slot: numbers[2], extra: numbers[3])
            }
            let page = engine.stats.page(from: position, limit: limit, scanLimit: PageCursor.scanLimit(limit))
            records = page.records
            next = page.next.map {
                PageCursor.encode(.stats, account: engine.accountID, [$0.inCache ? 1 : 0, $0.shard, $0.slot, $0.extra])
            }
        }
        var writer = JSONWriter(capacity: 320 * records.count + 2)
        writer.raw("[")
        for (index, (key, record)) in records.enumerated() {
            if index > 0 { writer.comma() }
            writer.raw("{")
            writer.key("domain"); writer.string(key.domain); writer.comma()
            writer.key("type"); writer.number(key.family.rawValue); writer.comma()
            writer.key("sp"); writer.string(key.network); writer.comma()
            writer.key("avgRtt"); writer.string(record.avgRtt); writer.comma()
            writer.key("maxRtt"); writer.string(record.maxRtt); writer.comma()
            writer.key("successNum"); writer.number(record.successNum); writer.comma()
            writer.key("cacheDnsNum"); writer.number(record.cacheDnsNum); writer.comma()
            writer.key("requestPDnsNum"); writer.number(record.requestPDnsNum); writer.comma()
            writer.key("gobackLocaldnsNum"); writer.number(record.gobackLocaldnsNum); writer.comma()
            writer.key("localErro"); writer.number(record.localErro); writer.comma()
            writer.key("timeoutErro"); writer.number(record.timeoutErro); writer.comma()
            writer.key("noResponseErro"); writer.number(record.noResponseErro); writer.comma()
            writer.key("noPermissionErro"); writer.number(record.noPermissionErro); writer.comma()
            writer.key("urlParameterErro"); writer.number(record.urlParameterErro); writer.comma()
            writer.key("urlPathErro"); writer.number(record.urlPathErro); writer.comma()
            writer.key("staleNum"); writer.number(record.staleNum); writer.comma()
            writer.key("prefetchNum"); writer.number(record.prefetchNum); writer.comma()
            writer.key("ruleNum"); writer.number(record.ruleNum)
            writer.raw("}")
        }
        writer.raw("]")
        var response = HTTPResponse.json(200, writer)
        if let next { response.headers.append(("X-Next-Cursor", next)) }
        return response
    }

    /// Records a `/stats` page holds unless `limit` says otherwise, and at most.
    static let statsPageDefault = 1000
    static let statsPageMax = 5000

    /// `GET /v1/{account}/stats/recent`: the account's last hour (`RecentActivity`), a point a
    /// minute, oldest first, the last one the minute in progress: `start` (Unix seconds),
    /// `seconds`, the lookups, hits, misses, stale answers, failures and failed upstream queries
    /// counted in it, and the `latency` of its lookup requests when it timed any.
    func recent(_ engine: ResolverEngine) -> HTTPResponse {
        let metrics = engine.metrics
        let points = metrics.recent.points(now: engine.now, totals: metrics.activityTotals, durations: metrics.lookupDurations)
        var writer = JSONWriter(capacity: 200 * points.count + 16)
        writer.raw(#"{"points":["#)
        for (index, point) in points.enumerated() {
            if index > 0 { writer.comma() }
            let counts = point.counts
            writer.raw("{")
            writer.key("start"); writer.number(Int(point.start)); writer.comma()
            writer.key("seconds"); writer.number(Int(point.seconds.rounded())); writer.comma()
            writer.key("lookups"); writer.number(counts.lookups); writer.comma()
            writer.key("hits"); writer.number(counts.hits); writer.comma()
            writer.key("misses"); writer.number(counts.misses); writer.comma()
            writer.key("stale"); writer.number(counts.stale); writer.comma()
            writer.key("failures"); writer.number(counts.failures); writer.comma()
            writer.key("upstreamErrors"); writer.number(counts.upstreamErrors)
            if let latency = point.latency { Self.write(latency, into: &writer) }
            writer.raw("}")
        }
        writer.raw("]}")
        return HTTPResponse.json(200, writer)
    }

    /// `,"latency":{"requests":N,"p50Us":..,"p95Us":..,"p99Us":..}`: microseconds, rounded.
    private static func write(_ latency: LatencyPercentiles, into writer: inout JSONWriter) {
        func micros(_ seconds: Double) -> Int { Int((seconds * 1_000_000).rounded()) }
        writer.comma()
        writer.key("latency"); writer.raw("{")
        writer.key("requests"); writer.number(latency.requests); writer.comma()
        writer.key("p50Us"); writer.number(micros(latency.p50)); writer.comma()
        writer.key("p95Us"); writer.number(micros(latency.p95)); writer.comma()
        writer.key("p99Us"); writer.number(micros(latency.p99))
        writer.raw("}")
    }
}
