/// The fields of the engine's `debug` lines (`logLevel: debug`). Called only inside `Log.debug`'s
/// autoclosures, so nothing here runs, and no string is built, unless debug lines are written.
/// Account ids, host names, client networks and upstream names only: never a key or a secret.
extension ResolverEngine {
    /// `account`, `host`, `type` and, for an account with `ispEnable`, the client `network`.
    func debugFields(_ key: CacheKey, _ more: [(String, any LogValue)] = []) -> [(String, any LogValue)] {
        var fields: [(String, any LogValue)] = [("account", accountID), ("host", key.host.value), ("type", key.family.typeName)]
        if !key.network.isEmpty { fields.append(("network", key.network)) }
        return fields + more
    }

    /// The same from a statistics key (what a chain event is recorded under).
    func debugFields(_ key: StatsKey, _ more: [(String, any LogValue)] = []) -> [(String, any LogValue)] {
        var fields: [(String, any LogValue)] = [("account", accountID), ("host", key.domain), ("type", key.family.typeName)]
        if !key.network.isEmpty { fields.append(("network", key.network)) }
        return fields + more
    }

    /// One upstream's (or the local DNS fallback's) reply: `upstream`, `outcome` (`answer`,
    /// `nxdomain`, `nodata`, `cname` for a dangling CNAME, or the error code), `seconds`, and
    /// `addresses` or `error`.
    static func debugFields(upstream: String, _ reply: ReplySummary, seconds: Double) -> [(String, any LogValue)] {
        var fields: [(String, any LogValue)] = [("upstream", upstream)]
        switch reply {
        case .answered(let kind, let addresses):
            fields += [("outcome", kind.rawValue), ("seconds", seconds), ("addresses", addresses)]
        case .failed(let error):
            fields += [("outcome", error.code.rawValue), ("seconds", seconds), ("error", error.message)]
        }
        return fields
    }

    /// How a flight ended: `outcome` (`answer`, `nxdomain`, `nodata`, `failed`, `timeout`,
    /// `budget`), `source` of an answer, `seconds` since the flight started.
    static func debugFields(_ outcome: FamilyOutcome, seconds: Double) -> [(String, any LogValue)] {
        switch outcome {
        case .success(let answer):
            let kind = answer.nxdomain ? "nxdomain" : answer.addressList.isEmpty ? "nodata" : "answer"
            let source = answer.stale ? "stale" : answer.source.rawValue
            return [("outcome", kind), ("source", source), ("ttl", Int(answer.ttl)), ("seconds", seconds)]
        case .failure(let failure):
            let kind = failure.retryAfter != nil ? "budget" : failure.timedOut ? "timeout" : "failed"
            return [("outcome", kind), ("seconds", seconds), ("error", failure.message)]
        }
    }
}
