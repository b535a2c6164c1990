import Dispatch
import HTTPDNSCore
import HTTPDNSTestSupport
import Testing

/// The shared test doubles behave as their documentation says (other test targets rely on it).
@Suite struct InMemoryUpstreamTests {
    private func query(_ host: String, _ family: RecordFamily = .a) -> UpstreamQuery {
        UpstreamQuery(host: .valid(host), family: family, timeoutMilliseconds: 1000)
    }

    private final class Replies: Sendable {
        let list = Locked([InMemoryUpstream.Reply]())
        func append(_ reply: InMemoryUpstream.Reply) { list.withLock { $0.append(reply) } }
        var values: [InMemoryUpstream.Reply] { list.value }
    }

    @Test func answersFromItsTableSynchronouslyAndCountsPerKey() {
        let upstream = InMemoryUpstream()
        upstream.setAnswer("a.example", addresses: ["192.0.2.1"], ttl: 5)
        let replies = Replies()
        upstream.resolve(query("a.example")) { replies.append($0) }
        upstream.resolve(query("a.example", .aaaa)) { replies.append($0) }
        #expect(replies.values.count == 2)
        #expect(replies.values.first == .success(UpstreamAnswer(addresses: ["192.0.2.1"], ttl: 5)))
        #expect(replies.values.last == .failure(UpstreamError(.transport, "no scripted answer")))
        #expect(upstream.calls("a.example") == 1)
        #expect(upstream.calls("a.example", .aaaa) == 1)
        #expect(upstream.totalCalls == 2)
        #expect(upstream.inFlight == 0)
    }

    @Test func heldRepliesWaitForRelease() {
        let upstream = InMemoryUpstream()
        upstream.setAnswer("a.example", addresses: ["192.0.2.1"], ttl: 5)
        upstream.holdReplies(true)
        let replies = Replies()
        upstream.resolve(query("a.example")) { replies.append($0) }
        upstream.resolve(query("b.example")) { replies.append($0) }
        #expect(replies.values.isEmpty)
        #expect(upstream.heldCount == 2)
        #expect(upstream.inFlight == 2)
        #expect(upstream.releaseOne())
        #expect(replies.values == [.success(UpstreamAnswer(addresses: ["192.0.2.1"], ttl: 5))])
        #expect(upstream.release() == 1)
        #expect(!upstream.releaseOne())
        #expect(upstream.peakInFlight == 2)
        #expect(upstream.inFlight == 0)
    }

    @Test func releaseAllAlsoReleasesRepliesHeldByCompletions() {
        let upstream = InMemoryUpstream()
        upstream.holdReplies(true)
        let replies = Replies()
        upstream.resolve(query("a.example")) { reply in
            replies.append(reply)
            upstream.resolve(query("b.example")) { replies.append($0) }
        }
        #expect(upstream.releaseAll() == 2)
        #expect(replies.values.count == 2)
    }

    @Test func replyDelayAdvancesTheClockBeforeTheReply() {
        let clock = ManualClock(start: 100)
        let upstream = InMemoryUpstream(clock: clock, replyDelay: 0.25)
        let seen = Locked([Double]())
        upstream.resolve(query("a.example")) { _ in seen.withLock { $0.append(clock.now()) } }
        #expect(seen.value == [100.25])
        upstream.setReplyDelay(0)
        upstream.resolve(query("a.example")) { _ in seen.withLock { $0.append(clock.now()) } }
        #expect(seen.value == [100.25, 100.25])
    }

    @Test(.timeLimit(.minutes(1)))
    func asynchronousDeliveryHappensAfterResolveReturns() async {
        let upstream = InMemoryUpstream()
        upstream.setAnswer("a.example", addresses: ["192.0.2.1"], ttl: 5)
        let queue = DispatchQueue(label: "test.reply")
        queue.suspend()
        upstream.deliverAsynchronously(on: queue)
        let replies = Replies()
        let countdown = Countdown(1)
        upstream.resolve(query("a.example")) {
            replies.append($0); countdown.tick()
        }
        #expect(replies.values.isEmpty)
        queue.resume()
        await countdown.wait()
        #expect(replies.values.count == 1)
    }

    @Test func manualClockMovesOnlyWhenTold() {
        let clock = ManualClock(start: 50)
        #expect(clock.now() == 50)
        clock.advance(by: 1.5)
        #expect(clock.now() == 51.5)
        clock.set(10)
        #expect(clock.now() == 10)
    }

    @Test func recordingPersistenceKeepsWhatAStoreWouldHold() {
        let persistence = RecordingCachePersistence()
        let key = CacheKey(host: .valid("a.example"), family: .a)
        let entry = CacheEntry(addresses: ["192.0.2.1"], originTTL: 5, storedAt: 1)
        persistence.upsert(account: "x", key: key, entry: entry)
        persistence.upsert(account: "y", key: key, entry: entry)
        #expect(persistence.stored(account: "x") == [key: entry])
        persistence.remove(account: "x", key: key)
        #expect(persistence.stored(account: "x").isEmpty)
        persistence.removeAll(account: "y")
        #expect(persistence.stored(account: "y").isEmpty)
        #expect(persistence.operations.count == 4)
    }
}
