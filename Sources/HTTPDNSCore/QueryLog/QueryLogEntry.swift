/// One logged name lookup of an account: when, what was asked in which wire format, from which
/// client network (masked with the account's prefixes), what answered and how.
public struct QueryLogEntry: Sendable, Equatable {
    public var account: String
    /// Seconds since the Unix epoch.
    public var time: Double
    /// The name asked for (for a batch, the names as the request lists them).
    public var host: String
    /// `A`, `AAAA` or the DNS type asked for.
    public var type: String
    /// The route's wire format: `v1`, `emas`, `json` (DoH JSON) or `rfc8484`.
    public var format: String
    /// The client's network (`198.51.100.0/24`), `""` when unknown.
    public var client: String
    /// The client's full address while the entry waits in the queue, with the account's
    /// prefixes: masked into `client` by the writer (`completed()`), off the request thread, and
    /// never written anywhere itself.
    public var clientAddress: IPAddress?
    public var clientPrefixV4: UInt8 = 24
    public var clientPrefixV6: UInt8 = 56
    /// What answered (`cache`, `upstream`, `stale`, `localdns`, `shared`) or why nothing did
    /// (`refused`, `failed`, `invalid`, `limited`).
    public var source: String
    /// The HTTP status of the response.
    public var status: Int
    /// The DNS response code of an RFC 8484 answer (`NOERROR`, `NXDOMAIN`, ...), `""` otherwise.
    public var rcode: String
    /// Microseconds from the request's arrival to its answer.
    public var durationMicroseconds: Int
    /// The access log's request id (`X-Request-Id`), `""` when there is none.
    public var requestID: String
    /// When the entry is deleted (seconds since the Unix epoch): `time` plus the account's `retention`.
    public var expires: Double

    public init(
        account: String, time: Double, host: String, type: String, format: String, client: String, source: String, status: Int,
        rcode: String, durationMicroseconds: Int, requestID: String, expires: Double
    ) {
        self.account = account
        self.time = time
        self.host = host
        self.type = type
        self.format = format
        self.client = client
        self.source = source
        self.status = status
        self.rcode = rcode
        self.durationMicroseconds = durationMicroseconds
        self.requestID = requestID
        self.expires = expires
    }

    /// The entry as the writer stores it: `clientAddress` masked into `client` (and forgotten).
    public func completed() -> QueryLogEntry {
        guard let address = clientAddress else { return self }
        var entry = self
        entry.client = QueryLogSettings.masked(address, v4: Int(clientPrefixV4), v6: Int(clientPrefixV6))
        entry.clientAddress = nil
        return entry
    }
}

/// What `GET /v1/{account}/querylog` asks for: one account's entries (every account's for nil,
/// the operator's `GET /v1/querylog`), newest first, from `since` on, optionally of one `host`
/// and one `status`, at most `limit`, older than the entry `before` (a row id from the previous
/// page; nil for the newest).
public struct QueryLogQuery: Sendable, Equatable {
    public var account: String?
    public var since: Double
    public var host: String?
    public var status: Int?
    public var limit: Int
    public var before: Int64?

    public init(account: String?, since: Double = 0, host: String? = nil, status: Int? = nil, limit: Int, before: Int64? = nil) {
        self.account = account
        self.since = since
        self.host = host
        self.status = status
        self.limit = limit
        self.before = before
    }
}

/// A page of entries, newest first, each with its row id; `next` is the row id the next page
/// starts before, nil on the last page.
public struct QueryLogPage: Sendable {
    public var entries: [(id: Int64, entry: QueryLogEntry)]
    public var next: Int64?

    public init(entries: [(id: Int64, entry: QueryLogEntry)], next: Int64?) {
        self.entries = entries
        self.next = next
    }
}

/// Where logged entries are kept and read back (the SQLite store's query log).
public protocol QueryLogReading: Sendable {
    /// Reads one page off the request threads; `completion` runs once, on another thread, with
    /// the page or the error's text.
    func read(_ query: QueryLogQuery, completion: @escaping @Sendable (Result<QueryLogPage, QueryLogReadError>) -> Void)
}

/// A query log read that failed (the store's message).
public struct QueryLogReadError: Error, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
}

/// Receives the query log's entries as the store writes them, on the store's queue (one
/// batch at a time, in order): the dnstap stream. Must not block.
public protocol QueryLogTap: Sendable {
    func tap(_ entries: [QueryLogEntry])
}
