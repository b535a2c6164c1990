import Dispatch
import HTTPDNSCore
import Synchronization

/// An `UpstreamResolver` that answers from a table the test fills in, counts what it is asked
/// and can hold replies until the test releases them.
///
/// - By default a reply is given synchronously, inside `resolve`, on the caller's thread;
///   `deliverAsynchronously(on:)` moves replies to a dispatch queue, like a real adapter's thread.
/// - With `holdReplies(true)` every completion is stored; `release()` calls the stored ones on
///   the test's thread, so a test can start N concurrent requests, check what is in flight, and
///   then let them finish deterministically.
/// - With a `clock` and `replyDelay`, the clock is advanced by the delay just before each reply,
///   so the engine measures a round-trip time of exactly that delay.
///
/// Names not in the table get `unknownResult` (a transport failure unless changed).
public final class InMemoryUpstream: UpstreamResolver {
    /// One row of the table: a host name (as `HostName.value`) and a family.
    public struct Key: Hashable, Sendable {
        public var host: String
        public var family: RecordFamily

        public init(host: String, family: RecordFamily) {
            self.host = host
            self.family = family
        }
    }

    public typealias Reply = Result<UpstreamAnswer, UpstreamError>
    public typealias Completion = @Sendable (Reply) -> Void

    private struct State {
        var table: [Key: Reply] = [:]
        var unknownResult: Reply = .failure(UpstreamError(.transport, "no scripted answer"))
        var calls: [Key: Int] = [:]
        var queries: [UpstreamQuery] = []
        var holding = false
        var held: [(Reply, Completion)] = []
        var replyDelay: Double = 0
        var queue: DispatchQueue?
        var inFlight = 0
        var peakInFlight = 0
    }

    public let name: String
    private let clock: ManualClock?
    private let state = Mutex(State())

    /// `clock` is advanced by `replyDelay` before every reply (nil: time does not move).
    public init(name: String = "memory", clock: ManualClock? = nil, replyDelay: Double = 0) {
        self.name = name
        self.clock = clock
        state.withLock { $0.replyDelay = replyDelay }
    }

    // MARK: Scripting

    /// Scripts the reply for `host` (written as `HostName.value`, lower case) and `family`.
    public func setReply(_ host: String, _ family: RecordFamily = .a, _ reply: Reply) {
        state.withLock { $0.table[Key(host: host, family: family)] = reply }
    }

    /// Scripts a positive answer.
    public func setAnswer(_ host: String, _ family: RecordFamily = .a, addresses: [String], ttl: UInt32?) {
        setReply(host, family, .success(UpstreamAnswer(addresses: addresses, ttl: ttl)))
    }

    /// Scripts a failure.
    public func setFailure(_ host: String, _ family: RecordFamily = .a, _ code: UpstreamError.Code, _ message: String = "scripted failure")
    {
        setReply(host, family, .failure(UpstreamError(code, message)))
    }

    /// The reply for names not in the table.
    public func setUnknownResult(_ reply: Reply) {
        state.withLock { $0.unknownResult = reply }
    }

    /// Seconds the clock is advanced before each following reply.
    public func setReplyDelay(_ seconds: Double) {
        state.withLock { $0.replyDelay = seconds }
    }

    /// Delivers replies that are not held asynchronously on `queue` (nil: synchronously, inside `resolve`).
    public func deliverAsynchronously(on queue: DispatchQueue?) {
        state.withLock { $0.queue = queue }
    }

    /// While on, completions are stored instead of called; turning it off does not release them.
    public func holdReplies(_ on: Bool) {
        state.withLock { $0.holding = on }
    }

    // MARK: Releasing held replies

    /// Calls every completion held right now (outside the lock, in arrival order) and returns
    /// how many. Replies held by requests those completions start stay held.
    @discardableResult
    public func release() -> Int {
        let batch = state.withLock { state -> [(Reply, Completion)] in
            let batch = state.held
            state.held.removeAll()
            return batch
        }
        for (reply, completion) in batch { deliver(reply, to: completion) }
        return batch.count
    }

    /// Calls the oldest held completion; false when none is held.
    @discardableResult
    public func releaseOne() -> Bool {
        let first = state.withLock { state -> (Reply, Completion)? in
            state.held.isEmpty ? nil : state.held.removeFirst()
        }
        guard let first else { return false }
        deliver(first.0, to: first.1)
        return true
    }

    /// Releases until nothing is held any more (including replies held by requests that the
    /// released completions started); returns how many were released in all.
    @discardableResult
    public func releaseAll() -> Int {
        var total = 0
        while true {
            let released = release()
            if released == 0 { return total }
            total += released
        }
    }

    // MARK: Observing

    /// How often `host`/`family` was asked.
    public func calls(_ host: String, _ family: RecordFamily = .a) -> Int {
        state.withLock { $0.calls[Key(host: host, family: family)] ?? 0 }
    }

    /// How many queries were received in all.
    public var totalCalls: Int { state.withLock { $0.queries.count } }

    /// Every query received, in arrival order.
    public var queries: [UpstreamQuery] { state.withLock { $0.queries } }

    /// Completions stored and not yet released.
    public var heldCount: Int { state.withLock { $0.held.count } }

    /// Queries received and not yet answered (held ones included).
    public var inFlight: Int { state.withLock { $0.inFlight } }

    /// The most queries that were ever received and not yet answered at the same time.
    public var peakInFlight: Int { state.withLock { $0.peakInFlight } }

    // MARK: UpstreamResolver

    public func resolve(_ query: UpstreamQuery, completion: @escaping @Sendable (Reply) -> Void) {
        let immediate = state.withLock { state -> (Reply, DispatchQueue?)? in
            let key = Key(host: query.host.value, family: query.family)
            state.calls[key, default: 0] += 1
            state.queries.append(query)
            state.inFlight += 1
            state.peakInFlight = max(state.peakInFlight, state.inFlight)
            let reply = state.table[key] ?? state.unknownResult
            if state.holding {
                state.held.append((reply, completion))
                return nil
            }
            return (reply, state.queue)
        }
        guard let (reply, queue) = immediate else { return }
        if let queue {
            queue.async { self.deliver(reply, to: completion) }
        } else {
            deliver(reply, to: completion)
        }
    }

    private func deliver(_ reply: Reply, to completion: Completion) {
        let delay = state.withLock { state -> Double in
            state.inFlight -= 1
            return state.replyDelay
        }
        if let clock, delay != 0 { clock.advance(by: delay) }
        completion(reply)
    }
}
