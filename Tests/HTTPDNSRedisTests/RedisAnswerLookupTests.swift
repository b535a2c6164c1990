import HTTPDNSCore
import Synchronization
import Testing

@testable import HTTPDNSRedis

/// What a lookup does with the replies of its lock's `SET NX PX` and its answer's `GET`.
struct RedisAnswerLookupTests {
    typealias Reply = Result<RedisReply, RedisError>

    static let entry = CacheEntry(addresses: ["192.0.2.1"], originTTL: 300, storedAt: SystemClock().now())
    static let taken: Reply = .success(.status("OK"))
    static let held: Reply = .success(.null)
    static let failed: Reply = .failure(RedisError(.timeout, "no reply"))
    static let freshValue: Reply = .success(.bulk(Array("fresh".utf8)))
    static let staleValue: Reply = .success(.bulk(Array("stale".utf8)))
    static let noValue: Reply = .success(.null)

    /// `fresh` of the decision: the value "fresh" decodes to `entry`, anything else does not.
    static func decide(_ lock: Reply, _ answer: Reply) -> RedisAnswerLookup {
        RedisAnswerLookup.decide(lock: lock, answer: answer) { $0 == Array("fresh".utf8) ? entry : nil }
    }

    @Test func aFreshAnswerIsFoundAndTheLockItTookIsGivenBack() {
        #expect(Self.decide(Self.taken, Self.freshValue) == .found(Self.entry, releaseLock: true))
        #expect(Self.decide(Self.held, Self.freshValue) == .found(Self.entry, releaseLock: false))
        // The lock's reply lost: the answer still serves, and there is no lock of this replica's to give back.
        #expect(Self.decide(Self.failed, Self.freshValue) == .found(Self.entry, releaseLock: false))
    }

    @Test func noFreshAnswerWithTheLockTakenIsThisReplicasToResolve() {
        #expect(Self.decide(Self.taken, Self.noValue) == .locked)
        // Expired (kept for stale serving) or unreadable counts as no answer.
        #expect(Self.decide(Self.taken, Self.staleValue) == .locked)
        // The answer's reply lost: the lock is still this replica's, and its store deletes it.
        #expect(Self.decide(Self.taken, Self.failed) == .locked)
    }

    @Test func noFreshAnswerWithTheLockHeldWaitsForItsHolder() {
        #expect(Self.decide(Self.held, Self.noValue) == .wait)
        #expect(Self.decide(Self.held, Self.staleValue) == .wait)
    }

    @Test func aFailedOrUnexpectedReplyWithoutAnAnswerResolvesWithoutTheLock() {
        #expect(Self.decide(Self.failed, Self.noValue) == .error)
        #expect(Self.decide(Self.held, Self.failed) == .error)
        #expect(Self.decide(Self.failed, Self.failed) == .error)
        #expect(Self.decide(.success(.integer(1)), Self.noValue) == .error)
        #expect(Self.decide(Self.held, .success(.integer(0))) == .error)
        #expect(Self.decide(.success(.error("WRONGTYPE")), Self.staleValue) == .error)
    }

    @Test(arguments: [false, true])
    func thePairCompletesOnceWithBothRepliesInEitherOrder(answerFirst: Bool) {
        let completed = Mutex<[(Reply, Reply)]>([])
        let replies = RedisLookupReplies { lock, answer in completed.withLock { $0.append((lock, answer)) } }
        if answerFirst {
            replies.answerReplied(Self.freshValue)
            #expect(completed.withLock { $0.isEmpty })
            replies.lockReplied(Self.held)
        } else {
            replies.lockReplied(Self.held)
            #expect(completed.withLock { $0.isEmpty })
            replies.answerReplied(Self.freshValue)
        }
        let calls = completed.withLock { $0 }
        #expect(calls.count == 1)
        #expect(calls.first?.0 == Self.held && calls.first?.1 == Self.freshValue)
    }
}
