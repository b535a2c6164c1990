import HTTPDNSCore

/// Whether the store's writes succeed, and when the write-behind tries again after a failure.
/// A value type without a clock or a lock: `SQLiteStore` keeps it behind a `Mutex` and passes
/// the time in (monotonic seconds for the backoff, Unix time for `failingSince`).
///
/// The store is healthy while neither the last cache commit nor the last account write failed.
/// A failed account write is also cleared by a later successful cache commit (the disk works
/// again); a failed cache commit only by a successful one (its changes are still queued).
struct StoreHealth: Sendable {
    /// What a recorded result changed, for the one log line per change of state.
    enum Transition: Sendable, Equatable {
        case none
        case becameUnhealthy(reason: String)
        case recovered(afterFailures: Int)
    }

    private(set) var cacheError: StoreError?
    private(set) var accountError: StoreError?
    /// Failed attempts (cache commits and account writes) since the store was last healthy.
    private(set) var failures = 0
    /// Unix time of the first failure of the current spell.
    private(set) var failingSince: Timestamp?
    /// Monotonic seconds before which the write-behind does not try again (nil: any time).
    private(set) var retryAt: Double?
    /// The damaged file was already set aside in this spell (at most once per spell).
    var rebuiltThisSpell = false

    /// 1, 2, 4, ... 30 s: a full disk is not hammered, and space that comes back is noticed soon.
    static let backoff = ExponentialBackoff(initial: 1, maximum: 30)

    var isHealthy: Bool { cacheError == nil && accountError == nil }

    /// The short reason shown in replies, `/readyz` and logs: the kind of failure and the SQLite
    /// result code, never the path or the statement.
    var reason: String? { (cacheError ?? accountError).map(Self.reason) }

    static func reason(_ error: StoreError) -> String {
        error.sqliteResultCode == 0 ? "\(error.code)" : "\(error.code) (SQLite result code \(error.sqliteResultCode))"
    }

    /// Whole seconds until the backoff ends (at least 1): the `Retry-After` of a refused write.
    /// `retryAt - now` read at the failure itself is the backoff plus a rounding error of the
    /// addition (15.5991919014 + 4 - 15.5991919014 is 4.000000000000002), so a remainder under
    /// a millisecond is not counted as one more second.
    func retryAfterSeconds(at monotonicNow: Double) -> Int {
        guard let retryAt, retryAt > monotonicNow else { return 1 }
        return max(1, Int((retryAt - monotonicNow - 0.001).rounded(.up)))
    }

    /// True when a scheduled (not an explicitly asked) flush should wait.
    func isBackingOff(at monotonicNow: Double) -> Bool {
        guard let retryAt else { return false }
        return monotonicNow < retryAt
    }

    mutating func cacheCommitFailed(_ error: StoreError, monotonicNow: Double, unixNow: Timestamp) -> Transition {
        let wasHealthy = isHealthy
        cacheError = error
        return failed(wasHealthy: wasHealthy, monotonicNow: monotonicNow, unixNow: unixNow)
    }

    mutating func accountWriteFailed(_ error: StoreError, monotonicNow: Double, unixNow: Timestamp) -> Transition {
        let wasHealthy = isHealthy
        accountError = error
        return failed(wasHealthy: wasHealthy, monotonicNow: monotonicNow, unixNow: unixNow)
    }

    mutating func cacheCommitSucceeded() -> Transition {
        let wasHealthy = isHealthy
        cacheError = nil
        accountError = nil
        return succeeded(wasHealthy: wasHealthy)
    }

    mutating func accountWriteSucceeded() -> Transition {
        let wasHealthy = isHealthy
        accountError = nil
        return succeeded(wasHealthy: wasHealthy)
    }

    private mutating func failed(wasHealthy: Bool, monotonicNow: Double, unixNow: Timestamp) -> Transition {
        failures += 1
        if wasHealthy { failingSince = unixNow }
        retryAt = monotonicNow + Self.backoff.delay(afterFailures: failures)
        return wasHealthy ? .becameUnhealthy(reason: reason ?? "unknown") : .none
    }

    private mutating func succeeded(wasHealthy: Bool) -> Transition {
        guard isHealthy else { return .none }
        let spell = failures
        failures = 0
        failingSince = nil
        retryAt = nil
        rebuiltThisSpell = false
        return wasHealthy ? .none : .recovered(afterFailures: spell)
    }
}
