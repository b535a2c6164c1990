/// An account's budget of upstream queries per second shared fairly among the clients asking:
/// the policy of `UpstreamBudget`, a value with no lock and no clock (callers pass the time and
/// the rate, so a configuration change applies at the next query).
///
/// The budget is one `TokenBucket` of `rate` tokens per second holding one second's worth (at
/// least one). Each client also has a share of it: the rate divided among the clients that
/// asked lately, and in two when only one did (the other half is held for a client yet to
/// come). A share is a bucket of that many queries per second holding the same part of the
/// budget's bucket (at least 2 queries, an A and an AAAA); a client "asked lately" while its
/// share's bucket is not full. Then:
///
/// - a client within its share may take any token of the budget;
/// - a client past its share may take only the tokens above the lower half of the budget's
///   bucket, which is kept for clients within theirs.
///
/// So a client flooding misses gets what the others leave (all of it when it is alone, in a
/// burst of half the bucket), and another client's occasional misses find the lower half
/// there. Work without a client (preloads, background refreshes) takes from the budget as
/// before, without a share. Clients are kept in a `ClientBucketTable` of `clientCapacity`
/// (memory never grows; the table is made at the first client's miss).
public struct FairBudget: Sendable {
    private var budget = TokenBucket()
    private var shares: ClientBucketTable?
    private let clientCapacity: Int

    /// Clients tracked at once by default.
    public static let defaultClientCapacity = 256

    public init(clientCapacity: Int = FairBudget.defaultClientCapacity) {
        self.clientCapacity = clientCapacity
    }

    /// Takes one query at `now` for `client` (nil: work of the service itself); `rate` > 0
    /// queries per second.
    public mutating func take(for client: ClientID?, at now: Timestamp, rate: Double) -> TokenBucket.Decision {
        let burst = max(1, rate)
        guard let client else { return budget.take(at: now, rate: rate, burst: burst) }
        if shares == nil { shares = ClientBucketTable(capacity: clientCapacity) }
        let active = shares!.activeCount(at: now) + (shares!.isActive(client.key, at: now) ? 0 : 1)
        let ways = Double(max(2, active))
        let shareRate = rate / ways
        let shareBurst = max(2, burst / ways)
        switch shares!.take(client.key, at: now, rate: shareRate, burst: shareBurst) {
        case .allowed:
            let decision = budget.take(at: now, rate: rate, burst: burst)
            if decision != .allowed { shares!.refund(client.key, at: now, rate: shareRate) }
            return decision
        case .refused(let shareRetry):
            let reserve = burst / 2
            let tokens = budget.tokens(at: now, rate: rate, burst: burst)
            // (A millionth of a token absorbs the rounding of the bucket's time arithmetic.)
            guard tokens + 1e-6 >= 1 + reserve else {
                let aboveReserve = max(1, Int(((1 + reserve - tokens) / rate).rounded(.up)))
                return .refused(retryAfter: min(shareRetry, aboveReserve))
            }
            return budget.take(at: now, rate: rate, burst: burst)
        }
    }

    /// Clients whose share is in use at `now` (asked lately), for tests and diagnostics.
    public func activeClients(at now: Timestamp) -> Int { shares?.activeCount(at: now) ?? 0 }
}
