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

    /// Resolves `query` through the upstreams in order, then the fallback (`ChainResolution`);
    /// `report` hears of each reply as it comes, `completion` of the outcome once.
    public func resolve(
        _ query: UpstreamQuery, clock: any WallClock,
        report: @escaping @Sendable (ChainEvent) -> Void,
        completion: @escaping @Sendable (ChainOutcome) -> Void
    ) {
        ChainCallbacks(chain: self, query: query, clock: clock, report: report, completion: completion).start()
    }
}

/// One resolution through an `UpstreamChain`, from the first upstream to the outcome: the query,
/// where it is in the chain and what its failures add up to. Its owner subclasses it to hear how
/// it goes: each reply as it comes (`report`, to count it), then the outcome, once (`finish`).
/// It is the one context every upstream's completion captures, so that a resolution allocates
/// nothing else of its own.
///
/// Unchecked `Sendable`: its state is changed by one attempt at a time, each started by the
/// completion of the one before (or by `start`), so never by two threads at once.
class ChainResolution: @unchecked Sendable {
    private let chain: UpstreamChain
    let query: UpstreamQuery
    let clock: any WallClock
    /// The upstream asked now; `upstreams.count` while the fallback is asked.
    private var index = 0
    private var allTimedOut = true
    private var lastError: UpstreamError?
    /// When the upstream asked now was asked.
    private var asked: Timestamp = 0

    init(chain: UpstreamChain, query: UpstreamQuery, clock: any WallClock) {
        self.chain = chain
        self.query = query
        self.clock = clock
    }

    /// One reply of an upstream or of the fallback, as it comes.
    func report(_ event: ChainEvent) {}

    /// How the resolution ended; called once.
    func finish(_ outcome: ChainOutcome) {}

    /// Asks the chain's first upstream (or, without upstreams, the fallback).
    func start() {
        attempt()
    }

    private func attempt() {
        guard index < chain.upstreams.count else {
            askFallback()
            return
        }
        let upstream = chain.upstreams[index]
        asked = clock.now()
        Log.debug("upstream query sent", [("upstream", upstream.name), ("host", query.host.value), ("type", query.family.typeName)])
        upstream.resolve(query) { [self] result in replied(result) }
    }

    private func replied(_ result: Result<UpstreamAnswer, UpstreamError>) {
        let upstream = chain.upstreams[index]
        report(.upstream(name: upstream.name, reply: ReplySummary(result), seconds: max(0, clock.now() - asked)))
        switch result {
        case .success(let answer):
            finish(.answered(answer, source: .upstream))
        case .failure(let error):
            allTimedOut = allTimedOut && error.code == .timeout
            lastError = error
            index += 1
            attempt()
        }
    }

    private var upstreamMessage: String { lastError.map { "last upstream error: \($0)" } ?? "no upstream configured" }

    private func askFallback() {
        guard let fallback = chain.fallback else {
            finish(.failed(timedOut: allTimedOut && lastError != nil, message: upstreamMessage))
            return
        }
        asked = clock.now()
        Log.debug(
            "every upstream failed: asking the local DNS fallback",
            [("upstream", fallback.name), ("host", query.host.value), ("type", query.family.typeName)])
        fallback.resolve(query) { [self] result in fallbackReplied(result) }
    }

    private func fallbackReplied(_ result: Result<UpstreamAnswer, UpstreamError>) {
        report(.fallback(reply: ReplySummary(result), seconds: max(0, clock.now() - asked)))
        switch result {
        case .success(let answer):
            finish(.answered(answer, source: .localdns))
        case .failure(let error):
            finish(.failed(timedOut: allTimedOut && error.code == .timeout, message: "\(upstreamMessage); local DNS: \(error)"))
        }
    }
}

/// A resolution whose owner listens with two closures.
private final class ChainCallbacks: ChainResolution, @unchecked Sendable {
    private let onReport: @Sendable (ChainEvent) -> Void
    private let onFinish: @Sendable (ChainOutcome) -> Void

    init(
        chain: UpstreamChain, query: UpstreamQuery, clock: any WallClock, report: @escaping @Sendable (ChainEvent) -> Void,
        completion: @escaping @Sendable (ChainOutcome) -> Void
    ) {
        onReport = report
        onFinish = completion
        super.init(chain: chain, query: query, clock: clock)
    }

    override func report(_ event: ChainEvent) { onReport(event) }
    override func finish(_ outcome: ChainOutcome) { onFinish(outcome) }
}
