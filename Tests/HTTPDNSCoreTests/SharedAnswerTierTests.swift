import Foundation
import HTTPDNSTestSupport
import Synchronization
import Testing

@testable import HTTPDNSCore

/// The engine's use of a shared answer tier: asked on a client's miss only, before
/// the upstreams; given what the upstreams answered; its lock always stored or released.
@Suite struct SharedAnswerTierTests {
    /// A tier in memory that answers at once and records what it was asked.
    final class RecordingTier: SharedAnswerTier {
        struct State {
            var entries: [CacheKey: CacheEntry] = [:]
            var lookups = 0
            var lockGiven = false
            /// Answer a lookup on a thread of the tier's own (as Redis' connection thread does),
            /// before `lookup` returns; else on the calling thread.
            var answersOnItsOwnThread = false
            var stores: [(key: CacheKey, entry: CacheEntry, keepSeconds: Double, holdsLock: Bool)] = []
            var releases = 0
        }

        let state = Mutex(State())

        func lookup(account: String, key: CacheKey, waitMilliseconds: Int, completion: @escaping @Sendable (SharedLookupResult) -> Void) {
            let result: SharedLookupResult = state.withLock { state in
                state.lookups += 1
                if let entry = state.entries[key] { return .found(entry) }
                return .miss(holdsLock: state.lockGiven)
            }
            guard state.withLock({ $0.answersOnItsOwnThread }) else {
                completion(result)
                return
            }
            let answered = DispatchSemaphore(value: 0)
            Thread {
                completion(result)
                answered.signal()
            }.start()
            answered.wait()
        }

        func store(account: String, key: CacheKey, entry: CacheEntry, keepSeconds: Double, holdsLock: Bool) {
            state.withLock { $0.stores.append((key, entry, keepSeconds, holdsLock)) }
        }

        func release(account: String, key: CacheKey) {
            state.withLock { $0.releases += 1 }
        }
    }

    struct Fixture {
        let clock = ManualClock()
        let upstream: InMemoryUpstream
        let tier = RecordingTier()
        let engine: ResolverEngine

        init(config: AccountConfig = .test()) {
            let upstream = InMemoryUpstream(name: "memory", clock: clock)
            self.upstream = upstream
            engine = ResolverEngine(accountID: "shop", config: config, clock: clock, persistence: nil, sharedTier: tier) { _, _ in
                UpstreamChain(upstreams: [upstream], fallback: nil)
            }
        }

        func resolve(_ host: String) -> FamilyOutcome? {
            let box = OutcomeBox()
            if let now = engine.resolve(host: HostName(host)!, family: .a, completion: { box.append($0) }) { return now }
            return box.values.first
        }
    }

    @Test func aMissFoundInTheSharedTierAnswersSharedWithoutAnUpstreamAndIsCachedHere() throws {
        let fixture = Fixture()
        let key = CacheKey(host: HostName("www.example.com")!, family: .a)
        fixture.tier.state.withLock {
            $0.entries[key] = CacheEntry(addresses: ["192.0.2.7"], originTTL: 300, storedAt: fixture.clock.now() - 100)
        }
        let answer = try #require(try fixture.resolve("www.example.com")?.get())
        #expect(answer == ResolvedAnswer(addresses: ["192.0.2.7"], ttl: 200, originTTL: 300, source: .shared))
        #expect(fixture.upstream.calls("www.example.com") == 0)
        // Tier one now: a hit costs the shared tier nothing.
        let hit = try #require(try fixture.resolve("www.example.com")?.get())
        #expect(hit.source == .cache && hit.addresses == ["192.0.2.7"])
        #expect(fixture.tier.state.withLock { $0.lookups } == 1)
    }

    @Test func anUpstreamAnswerIsStoredForItsTTLPlusTheStaleWindowReleasingTheLock() throws {
        let fixture = Fixture(config: .test { $0.maxStaleAge = 600 })
        fixture.tier.state.withLock { $0.lockGiven = true }
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        let answer = try #require(try fixture.resolve("www.example.com")?.get())
        #expect(answer.source == .upstream)
        let stores = fixture.tier.state.withLock { $0.stores }
        #expect(stores.count == 1)
        #expect(stores.first?.entry.addresses == ["192.0.2.1"])
        #expect(stores.first?.keepSeconds == 900)
        #expect(stores.first?.holdsLock == true)
    }

    /// Jobs given to an `OriginLoop`, run when the test says.
    final class HeldJobs: Sendable {
        final class List: Sendable {
            let jobs = Mutex<[@Sendable () -> Void]>([])
        }
        let list: List
        let loop: OriginLoop
        var count: Int { list.jobs.withLock { $0.count } }
        init(accepting: Bool) {
            let list = List()
            self.list = list
            loop = OriginLoop { job in
                guard accepting else { return false }
                list.jobs.withLock { $0.append(job) }
                return true
            }
        }
        func runAll() {
            let taken = list.jobs.withLock { jobs in
                defer { jobs.removeAll() }
                return jobs
            }
            for job in taken { job() }
        }
    }

    @Test func afterTheTierTheMissContinuesOnTheLoopOfTheThreadThatAsked() throws {
        let fixture = Fixture()
        fixture.tier.state.withLock { $0.answersOnItsOwnThread = true }
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        let held = HeldJobs(accepting: true)
        OriginLoop.setCurrent(held.loop)
        defer { OriginLoop.setCurrent(nil) }
        let box = OutcomeBox()
        let now = fixture.engine.resolve(host: HostName("www.example.com")!, family: .a) { box.append($0) }
        #expect(now == nil)
        // The tier answered at once, yet the upstream is not asked until the loop runs the rest.
        #expect(fixture.tier.state.withLock { $0.lookups } == 1)
        #expect(fixture.upstream.calls("www.example.com") == 0)
        #expect(held.count == 1)
        held.runAll()
        #expect(fixture.upstream.calls("www.example.com") == 1)
        let answer = try #require(try box.values.first?.get())
        #expect(answer.source == .upstream && answer.addresses == ["192.0.2.1"])
    }

    /// A tier whose connection rides on the asking thread's loop answers on that thread: the
    /// miss goes on at once, with no job queued to the loop (a wake-up of its own).
    @Test func aTierAnsweringOnTheLoopsOwnThreadContinuesTheMissAtOnce() throws {
        let fixture = Fixture()
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        let held = HeldJobs(accepting: true)
        OriginLoop.setCurrent(held.loop)
        defer { OriginLoop.setCurrent(nil) }
        let answer = try #require(try fixture.resolve("www.example.com")?.get())
        #expect(answer.source == .upstream && answer.addresses == ["192.0.2.1"])
        #expect(fixture.upstream.calls("www.example.com") == 1)
        #expect(held.count == 0)
    }

    @Test func aLoopThatNoLongerTakesWorkLeavesTheMissToContinueAtOnce() throws {
        let fixture = Fixture()
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        let held = HeldJobs(accepting: false)
        OriginLoop.setCurrent(held.loop)
        defer { OriginLoop.setCurrent(nil) }
        let answer = try #require(try fixture.resolve("www.example.com")?.get())
        #expect(answer.source == .upstream)
        #expect(fixture.upstream.calls("www.example.com") == 1)
    }

    @Test func aFailedResolutionReleasesTheLockAndStoresNothing() {
        let fixture = Fixture()
        fixture.tier.state.withLock { $0.lockGiven = true }
        fixture.upstream.setFailure("www.example.com", .a, .serverFailure)
        guard case .failure = fixture.resolve("www.example.com") else {
            Issue.record("expected a failure")
            return
        }
        #expect(fixture.tier.state.withLock { ($0.stores.count, $0.releases) } == (0, 1))
    }

    @Test func anExpiredSharedAnswerIsNotServedTheUpstreamIsAsked() throws {
        let fixture = Fixture()
        let key = CacheKey(host: HostName("www.example.com")!, family: .a)
        fixture.tier.state.withLock {
            $0.entries[key] = CacheEntry(addresses: ["192.0.2.7"], originTTL: 30, storedAt: fixture.clock.now() - 100)
        }
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        let answer = try #require(try fixture.resolve("www.example.com")?.get())
        #expect(answer.source == .upstream && answer.addresses == ["192.0.2.1"])
        #expect(fixture.upstream.calls("www.example.com") == 1)
    }

    @Test func perNetworkEntriesAreLookedUpByTheirNetworkKey() {
        let fixture = Fixture(config: .test { $0.ispEnable = true })
        let key = CacheKey(host: HostName("www.example.com")!, family: .a, network: "198.51.100.0/24")
        fixture.tier.state.withLock {
            $0.entries[key] = CacheEntry(addresses: ["192.0.2.8"], originTTL: 300, storedAt: fixture.clock.now())
        }
        let box = OutcomeBox()
        let now = fixture.engine.resolve(host: HostName("www.example.com")!, family: .a, network: "198.51.100.0/24") { box.append($0) }
        let answer = try? (now ?? box.values.first)?.get()
        #expect(answer?.source == .shared && answer?.addresses == ["192.0.2.8"])
    }

    @Test func anAccountWithoutACacheNeverAsksTheSharedTier() {
        let fixture = Fixture(config: .test { $0.cacheEnable = false })
        fixture.upstream.setAnswer("www.example.com", addresses: ["192.0.2.1"], ttl: 300)
        _ = fixture.resolve("www.example.com")
        #expect(fixture.tier.state.withLock { ($0.lookups, $0.stores.count) } == (0, 0))
    }
}
