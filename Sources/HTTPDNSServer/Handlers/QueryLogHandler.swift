import HTTPDNSCore

/// `GET /v1/{account}/querylog`: the account's logged lookups, newest first, paged; and the
/// operator's `GET /v1/querylog` (admin): every account's, or one's by `account`.
struct QueryLogHandler: Sendable {
    let state: ServiceState

    /// The arguments: `since` (Unix seconds, entries at or after it), `host` (one name),
    /// `status` (one HTTP status), `limit` (1-`maxLimit`, default `defaultLimit`) and `cursor`
    /// (the previous page's `next_cursor`). A page reads O(limit) rows along the account's
    /// index; the read runs on the query log's own queue and the answer is deferred until it
    /// is done. 400 naming the argument for a bad one; 503 when no store keeps the log.
    func entries(_ request: HTTPRequest, engine: ResolverEngine) throws(APIError) -> HandlerResult {
        try entries(Self.query(request, account: engine.accountID), labelled: false)
    }

    /// The operator's view: the entries of every account (each labelled with its `account`),
    /// or of the one the `account` argument names (which need not exist any more: its entries
    /// stay for their retention).
    func allEntries(_ request: HTTPRequest) throws(APIError) -> HandlerResult {
        var account: String?
        if let text = request.query["account"] {
            guard AccountID(text) != nil else { throw APIError(.invalidParameter, "account must be an account id, got '\(text)'") }
            account = text
        }
        return try entries(Self.query(request, account: account), labelled: true)
    }

    private func entries(_ query: QueryLogQuery, labelled: Bool) throws(APIError) -> HandlerResult {
        guard let reader = state.queryLogReader else {
            throw APIError(.storeUnavailable, "the query log is not kept (no store)")
        }
        return .deferred { respond in
            reader.read(query) { result in
                switch result {
                case .success(let page): respond(Self.response(page, query: query, labelled: labelled))
                case .failure(let error): respond(APIError(.storeUnavailable, "the query log cannot be read: \(error.message)").response)
                }
            }
        }
    }

    /// The query `request`'s arguments ask for; throws `invalidParameter` naming the bad one.
    static func query(_ request: HTTPRequest, account: String?) throws(APIError) -> QueryLogQuery {
        var query = QueryLogQuery(account: account, limit: defaultLimit)
        if let text = request.query["limit"] {
            guard let value = Int(text), (1...maxLimit).contains(value) else {
                throw APIError(.invalidParameter, "limit must be 1-\(maxLimit), got '\(text)'")
            }
            query.limit = value
        }
        if let text = request.query["since"] {
            guard let value = Double(text), value.isFinite, value >= 0 else {
                throw APIError(.invalidParameter, "since must be a time in seconds since the Unix epoch, got '\(text)'")
            }
            query.since = value
        }
        if let text = request.query["host"] {
            guard let host = HostName(text) else { throw APIError(.invalidParameter, "host must be a host name, got '\(text)'") }
            query.host = host.value
        }
        if let text = request.query["status"] {
            guard let value = Int(text), (100...599).contains(value) else {
                throw APIError(.invalidParameter, "status must be an HTTP status (100-599), got '\(text)'")
            }
            query.status = value
        }
        if let text = request.query["cursor"], !text.isEmpty {
            guard
                let numbers = PageCursor.decode(
                    text, .queryLog, account: account ?? "", filter: filter(query), count: 1, maximum: .max)
            else {
                throw APIError(.invalidParameter, "cursor '\(text)' was not returned by this endpoint for this account and these filters")
            }
            query.before = Int64(numbers[0])
        }
        return query
    }

    /// The filters a cursor is bound to (a cursor of one filter is refused with another).
    private static func filter(_ query: QueryLogQuery) -> String {
        "\(query.since)|\(query.host ?? "")|\(query.status.map(String.init) ?? "")"
    }

    /// `{"entries":[...],"next_cursor":".."|null}`; each entry names its account when `labelled`.
    static func response(_ page: QueryLogPage, query: QueryLogQuery, labelled: Bool) -> HTTPResponse {
        var writer = JSONWriter(capacity: 256 * page.entries.count + 64)
        writer.raw("{")
        writer.key("entries")
        writer.raw("[")
        for (index, (_, entry)) in page.entries.enumerated() {
            if index > 0 { writer.comma() }
            writer.raw("{")
            if labelled { writer.key("account"); writer.string(entry.account); writer.comma() }
            writer.key("time"); writer.raw(Self.seconds(entry.time)); writer.comma()
            writer.key("host"); writer.string(entry.host); writer.comma()
            writer.key("type"); writer.string(entry.type); writer.comma()
            writer.key("format"); writer.string(entry.format); writer.comma()
            writer.key("client"); writer.string(entry.client); writer.comma()
            writer.key("source"); writer.string(entry.source); writer.comma()
            writer.key("status"); writer.number(entry.status); writer.comma()
            writer.key("rcode"); writer.string(entry.rcode); writer.comma()
            writer.key("duration_us"); writer.number(entry.durationMicroseconds); writer.comma()
            writer.key("request_id"); writer.string(entry.requestID)
            writer.raw("}")
        }
        writer.raw("]")
        writer.comma()
        writer.key("next_cursor")
        if let next = page.next {
            writer.string(PageCursor.encode(.queryLog, account: query.account ?? "", filter: filter(query), [Int(next)]))
        } else {
            writer.raw("null")
        }
        writer.raw("}")
        return HTTPResponse.json(200, writer)
    }

    /// Seconds since the epoch with milliseconds, as a JSON number (`1733400000.125`).
    static func seconds(_ time: Double) -> String {
        let milliseconds = Int((max(0, time) * 1000).rounded())
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    static let defaultLimit = 100
    static let maxLimit = 1000
}
