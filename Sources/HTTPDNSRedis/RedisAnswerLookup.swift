import HTTPDNSCore
import Synchronization

/// What the shared tier does with the two replies of a lookup: the lock's `SET <lock> <replica>
/// NX PX <ms>` and the answer's `GET <answer>`, sent together in that order (one round trip, no
/// script). A decision made from the replies alone; `RedisAnswerTier` carries it out.
enum RedisAnswerLookup: Equatable {
    /// A fresh answer. `releaseLock`: the lock was free and this lookup took it with the answer
    /// there; it is deleted at once (`DEL`), so no replica waits on it.
    case found(CacheEntry, releaseLock: Bool)
    /// No fresh answer, and the lock is this replica's: it resolves the name, then stores the
    /// answer (which deletes the lock) or releases the lock.
    case locked
    /// No fresh answer, and another replica holds the lock: wait for its answer.
    case wait
    /// A reply failed or is not one the commands give: resolve without the lock.
    case error

    /// The decision for the lock's reply (`OK` when taken, null when held by another replica)
    /// and the answer's (a value, or null). `fresh` reads a stored value: nil when it does not
    /// decode or has expired (an answer kept for stale serving), which counts as no answer.
    ///
    /// The lock is taken before the answer is read, so an answer stored between the two is
    /// still found. A lock taken while the answer failed to come back is kept: this replica
    /// resolves the name and its store deletes the lock, as for any miss.
    static func decide(
        lock: Result<RedisReply, RedisError>, answer: Result<RedisReply, RedisError>, fresh: ([UInt8]) -> CacheEntry?
    ) -> RedisAnswerLookup {
        let taken: Bool?
        switch lock {
        case .success(.status("OK")): taken = true
        case .success(.null): taken = false
        case .success, .failure: taken = nil
        }
        let answered: Bool
        switch answer {
        case .success(.bulk(let bytes)):
            if let entry = fresh(bytes) { return .found(entry, releaseLock: taken == true) }
            answered = true
        case .success(.null): answered = true
        case .success, .failure: answered = false
        }
        switch taken {
        case true?: return .locked
        case false?: return answered ? .wait : .error
        case nil: return .error
        }
    }
}

/// The two replies of one lookup, which come back on the connection's thread (the lock's first
/// on a healthy connection; in any order when they fail): the second calls `complete` with both.
final class RedisLookupReplies: Sendable {
    typealias Reply = Result<RedisReply, RedisError>
    private let state = Mutex<(lock: Reply?, answer: Reply?)>((nil, nil))
    private let complete: @Sendable (_ lock: Reply, _ answer: Reply) -> Void

    init(complete: @escaping @Sendable (_ lock: Reply, _ answer: Reply) -> Void) {
        self.complete = complete
    }

    func lockReplied(_ reply: Reply) { record { $0.lock = reply } }

    func answerReplied(_ reply: Reply) { record { $0.answer = reply } }

    /// Keeps one reply; completes when it was the second.
    private func record(_ keep: (inout (lock: Reply?, answer: Reply?)) -> Void) {
        let both = state.withLock { state -> (Reply, Reply)? in
            keep(&state)
            guard let lock = state.lock, let answer = state.answer else { return nil }
            return (lock, answer)
        }
        if let (lock, answer) = both { complete(lock, answer) }
    }
}
