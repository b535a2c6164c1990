import HTTPDNSCore
import Testing

@Suite struct AccountReplicationStateTests {
    typealias Action = AccountReplicationState.Action

    static func live(_ id: String, _ version: Int64, ttl: UInt32 = 300) -> AccountRecord {
        AccountRecord(id: id, version: version, config: .test { $0.maxCacheTTL = ttl })
    }

    static func deleted(_ id: String, _ version: Int64) -> AccountRecord {
        AccountRecord(id: id, version: version, config: nil)
    }

    /// A change published by another replica is applied once; the same message again (or the
    /// reply to this replica's own write after its message) changes nothing.
    @Test func aNewerRecordIsAppliedOnce() {
        var state = AccountReplicationState(local: [Self.live("shop", 3)])
        #expect(state.receive(Self.live("shop", 5, ttl: 60)) == [.apply(Self.live("shop", 5, ttl: 60))])
        #expect(state.receive(Self.live("shop", 5, ttl: 60)) == [])
        #expect(state.accounts["shop"]?.maxCacheTTL == 60)
    }

    /// Messages arrive out of order across reconnects: an older record never replaces a newer one.
    @Test func anOlderRecordIsIgnored() {
        var state = AccountReplicationState(local: [Self.live("shop", 9)])
        #expect(state.receive(Self.live("shop", 4, ttl: 1)) == [])
        #expect(state.receive(Self.deleted("shop", 8)) == [])
        #expect(state.accounts["shop"]?.maxCacheTTL == 300)
    }

    /// A deletion is a record too: applied, then the account is gone, and a stale copy of the
    /// account cannot bring it back.
    @Test func aDeletionIsAppliedAndStays() {
        var state = AccountReplicationState(local: [Self.live("shop", 2)])
        #expect(state.receive(Self.deleted("shop", 3)) == [.apply(Self.deleted("shop", 3))])
        #expect(state.accounts["shop"] == nil)
        #expect(state.receive(Self.live("shop", 2)) == [])
        #expect(state.accounts["shop"] == nil)
    }

    /// At the same version Redis wins when the two differ (only after Redis lost data).
    @Test func atTheSameVersionRedisWins() {
        var state = AccountReplicationState(local: [Self.live("shop", 4, ttl: 1)])
        #expect(state.receive(Self.live("shop", 4, ttl: 2)) == [.apply(Self.live("shop", 4, ttl: 2))])
    }

    /// Reconnecting: what Redis holds newer is applied, what this replica holds newer or Redis
    /// lacks is offered, equal records are left alone; actions come in id order.
    @Test func reconcileAppliesNewerAndOffersWhatRedisLacks() {
        var state = AccountReplicationState(local: [
            Self.live("a", 5), Self.live("b", 2), Self.live("c", 7), Self.deleted("d", 6), Self.live("e", 3),
        ])
        let actions = state.reconcile(shared: [Self.live("a", 5), Self.live("b", 4, ttl: 9), Self.live("c", 6), Self.live("f", 1)])
        #expect(
            actions == [
                .apply(Self.live("b", 4, ttl: 9)),
                .offer(Self.live("c", 7)),
                .offer(Self.deleted("d", 6)),
                .offer(Self.live("e", 3)),
                .apply(Self.live("f", 1)),
            ])
        #expect(state.accounts.keys.sorted() == ["a", "b", "c", "e", "f"])
    }

    /// Configuration-file accounts (version 0) are seeded only when Redis has no record of
    /// them: a record in Redis, even a deletion, wins over the file.
    @Test func fileAccountsAreSeededOnlyWhenAbsent() {
        var state = AccountReplicationState(local: [Self.live("seed", 0), Self.live("known", 0, ttl: 1), Self.live("gone", 0)])
        let actions = state.reconcile(shared: [Self.live("known", 3, ttl: 2), Self.deleted("gone", 4)])
        #expect(
            actions == [
                .apply(Self.deleted("gone", 4)),
                .apply(Self.live("known", 3, ttl: 2)),
                .offer(Self.live("seed", 0)),
            ])
        #expect(state.accounts.keys.sorted() == ["known", "seed"])
    }

    /// A version-0 deletion (an account deleted before Redis was configured) is not pushed to
    /// Redis: there is nothing to seed.
    @Test func aVersionZeroDeletionIsNotOffered() {
        var state = AccountReplicationState(local: [Self.deleted("old", 0)])
        #expect(state.reconcile(shared: []) == [])
    }

    /// Redis restarted empty: every replica offers all it holds, deletions included (so a
    /// replica that missed a deletion cannot bring the account back), and the winner Redis
    /// returns is applied where it differs.
    @Test func anEmptyRedisIsRepopulated() {
        var first = AccountReplicationState(local: [Self.live("a", 3), Self.deleted("b", 5)])
        var stale = AccountReplicationState(local: [Self.live("a", 2), Self.live("b", 1)])
        #expect(first.reconcile(shared: []) == [.offer(Self.live("a", 3)), .offer(Self.deleted("b", 5))])
        // The first replica's offers are in Redis when the stale one reconnects.
        #expect(
            stale.reconcile(shared: [Self.live("a", 3), Self.deleted("b", 5)]) == [
                .apply(Self.live("a", 3)), .apply(Self.deleted("b", 5)),
            ])
        #expect(first.local == stale.local)
    }

    /// The reply to an offer is the record Redis keeps: a lost offer applies the winner.
    @Test func aLostOfferAppliesTheWinner() {
        var state = AccountReplicationState(local: [Self.live("a", 0)])
        #expect(state.reconcile(shared: []) == [.offer(Self.live("a", 0))])
        // Another replica seeded it first; Redis answers with its record.
        #expect(state.receive(Self.live("a", 11, ttl: 5)) == [.apply(Self.live("a", 11, ttl: 5))])
        #expect(state.receive(Self.live("a", 11, ttl: 5)) == [])
    }

    /// A later record of the same id in the start-up list (the database over the file) wins.
    @Test func theDatabaseOverlaysTheFileAtStart() {
        let state = AccountReplicationState(local: [Self.live("a", 0), Self.deleted("a", 4)])
        #expect(state.local["a"] == Self.deleted("a", 4))
        #expect(state.accounts.isEmpty)
    }
}

extension AccountReplicationStateTests {
    /// A record the local database could not store is applied again by the next message or
    /// reconnect, and is never offered to Redis as this replica's own.
    @Test func aRecordThatFailedToApplyIsAppliedAgain() {
        var state = AccountReplicationState(local: [Self.live("a", 1)])
        #expect(state.receive(Self.live("a", 2, ttl: 7)) == [.apply(Self.live("a", 2, ttl: 7))])
        state.forget(Self.live("a", 2, ttl: 7))
        #expect(state.receive(Self.live("a", 2, ttl: 7)) == [.apply(Self.live("a", 2, ttl: 7))])
        state.forget(Self.live("a", 2, ttl: 7))
        #expect(state.reconcile(shared: []) == [])
    }
}
