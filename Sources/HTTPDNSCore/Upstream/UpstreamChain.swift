/// What happened during one resolution through the chain, reported as it happens so the engine
/// can count it (statistics record, metrics).
public enum ChainEvent: Sendable {
    /// One upstream was asked; `seconds` is how long it took to answer or fail.
    case upstream(name: String, reply: ReplySummary, seconds: Double)
    /// Every upstream failed and the system resolver was asked.
    case fallback(reply: ReplySummary, seconds: Double)
}

/// One reply as it is counted and logged: what kind of answer and how many addresses, or the
/// error. The answer itself goes on to the chain's outcome; a report copies none of it.
public enum ReplySummary: Sendable, Equatable {
    case answered(Kind, addresses: Int)
    case failed(UpstreamError)

    /// `answer` (addresses), `nxdomain`, `nodata`, or `cname` (a CNAME without addresses).
    public enum Kind: String, Sendable {
        case answer, nxdomain, nodata, cname
    }

    public init(_ result: Result<UpstreamAnswer, UpstreamError>) {
        switch result {
        case .success(let answer):
            let kind: Kind =
                answer.nxdomain ? .nxdomain : !answer.isNegative ? .answer : answer.cnameTarget != nil ? .cname : .nodata
            self = .answered(kind, addresses: answer.addressList.count)
        case .failure(let error):
            self = .failed(error)
        }
    }

    /// An answer without addresses (NXDOMAIN, NODATA, a CNAME left dangling).
    public var isNegative: Bool {
        if case .answered(_, let addresses) = self { return addresses == 0 }
        return false
    }
}

/// How a resolution through the chain ended.
public enum ChainOutcome: Sendable {
    case answered(UpstreamAnswer, source: AnswerSource)
    /// Nothing answered. `timedOut` is true when every attempt failed by timeout.
    case failed(timedOut: Bool, message: String)
}

/// The ordered upstreams of an account with failover, and the system resolver as the last resort
/// ("goback local DNS"). A reply counts as an answer when the upstream parsed it (positive,
/// NXDOMAIN or NODATA); timeouts, transport errors, HTTP errors, unparseable replies and DNS
/// failure codes move on to the next upstream.
public struct UpstreamChain: Sendable {
    public let upstreams: [any UpstreamResolver]
    public let fallback: (any UpstreamResolver)?

    public init(upstreams: [any UpstreamResolver], fallback: (any UpstreamResolver)?) {
        self.upstreams = upstreams
        self.fallback = fallback
    }

    /// Resolves `query` through the upstreams in order, then the fallback: `listener` hears of
    /// each reply as it comes and of the outcome once. One object for the whole resolution, so
    /// an attempt's completion captures it alone.
    public func resolve(_ query: UpstreamQuery, clock: any WallClock, listener: any ChainListener) {
        attempt(index: 0, query: query, clock: clock, allTimedOut: true, lastError: nil, listener: listener)
    }

    /// The same with the two callbacks as closures.
    public func resolve(
        _ query: UpstreamQuery, clock: any WallClock,
        report: @escaping @Sendable (ChainEvent) -> Void,
        completion: @escaping @Sendable (ChainOutcome) -> Void
    ) {
        resolve(query, clock: clock, listener: ChainCallbacks(report: report, completion: completion))
    }

    private func attempt(
        index: Int, query: UpstreamQuery, clock: any WallClock, allTimedOut: Bool, lastError: UpstreamError?, listener: any ChainListener
    ) {
        guard index < upstreams.count else {
            finish(query: query, clock: clock, allTimedOut: allTimedOut, lastError: lastError, listener: listener)
            return
        }
        let upstream = upstreams[index]
        let started = clock.now()
        Log.debug("upstream query sent", [("upstream", upstream.name), ("host", query.host.value), ("type", query.family.typeName)])
        upstream.resolve(query) { result in
            listener.report(.upstream(name: upstream.name, reply: ReplySummary(result), seconds: max(0, clock.now() - started)))
            switch result {
            case .success(let answer):
                listener.finish(.answered(answer, source: .upstream))
            case .failure(let error):
                self.attempt(
                    index: index + 1, query: query, clock: clock, allTimedOut: allTimedOut && error.code == .timeout,
                    lastError: error, listener: listener)
            }
        }
    }

    private func finish(
        query: UpstreamQuery, clock: any WallClock, allTimedOut: Bool, lastError: UpstreamError?, listener: any ChainListener
    ) {
        let upstreamMessage = lastError.map { "last upstream error: \($0)" } ?? "no upstream configured"
        guard let fallback else {
            listener.finish(.failed(timedOut: allTimedOut && lastError != nil, message: upstreamMessage))
            return
        }
        let started = clock.now()
        Log.debug(
            "every upstream failed: asking the local DNS fallback",
            [("upstream", fallback.name), ("host", query.host.value), ("type", query.family.typeName)])
        fallback.resolve(query) { result in
            listener.report(.fallback(reply: ReplySummary(result), seconds: max(0, clock.now() - started)))
            switch result {
            case .success(let answer):
                listener.finish(.answered(answer, source: .localdns))
            case .failure(let error):
                listener.finish(
                    .failed(
                        timedOut: allTimedOut && error.code == .timeout,
                        message: "\(upstreamMessage); local DNS: \(error)"))
            }
        }
    }
}

/// Who hears how one resolution through an `UpstreamChain` goes: every reply as it comes
/// (`report`, to count it), then the outcome, once (`finish`).
public protocol ChainListener: AnyObject, Sendable {
    func report(_ event: ChainEvent)
    func finish(_ outcome: ChainOutcome)
}

/// A listener made of two closures.
private final class ChainCallbacks: ChainListener {
    private let onReport: @Sendable (ChainEvent) -> Void
    private let onFinish: @Sendable (ChainOutcome) -> Void

    init(report: @escaping @Sendable (ChainEvent) -> Void, completion: @escaping @Sendable (ChainOutcome) -> Void) {
        onReport = report
        onFinish = completion
    }

    func report(_ event: ChainEvent) { onReport(event) }
    func finish(_ outcome: ChainOutcome) { onFinish(outcome) }
}
