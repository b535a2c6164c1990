import HTTPDNSCore
import Testing

@testable import HTTPDNSStore

/// The write-behind queue's bound: queued plus in-flight changes stay within it, changes to keys
/// already queued still replace theirs, new keys beyond it are dropped, counted and leave their
/// account incomplete until an account-wide delete.
@Suite struct WriteBehindStateTests {
    private func upsert(_ state: inout WriteBehindState, _ host: String, account: String = "acct") -> WriteBehindState.Queued {
        state.upsert(account: account, key: Sample.key(host), entry: Sample.entry(["192.0.2.1"]))
    }

    @Test func newKeysBeyondTheBoundAreDroppedAndCountedWhileQueuedKeysStillTakeTheirLatestChange() {
        var state = WriteBehindState(earlyFlushThreshold: 1_000, maxPendingChanges: 3)
        for host in ["a.example", "b.example", "c.example"] { #expect(upsert(&state, host).dropped == false) }
        let first = upsert(&state, "d.example")
        #expect(first == WriteBehindState.Queued(dropped: true, accountBecameIncomplete: true))
        #expect(upsert(&state, "e.example") == WriteBehindState.Queued(dropped: true))  // logged once per account
        #expect(state.remove(account: "acct", key: Sample.key("f.example")).dropped)
        #expect(state.pending == 3)
        #expect(state.droppedWrites == 3)
        #expect(state.incompleteAccounts == ["acct"])

        // A queued key takes its newer value (no growth), and its removal too.
        #expect(state.upsert(account: "acct", key: Sample.key("a.example"), entry: Sample.entry(["192.0.2.9"])).dropped == false)
        #expect(state.remove(account: "acct", key: Sample.key("b.example")).dropped == false)
        #expect(state.pending == 3)
        #expect(state.batch.accounts["acct"]?.changes[Sample.key("a.example")] == .upsert(Sample.entry(["192.0.2.9"])))
        #expect(state.batch.accounts["acct"]?.changes[Sample.key("b.example")] == .remove)

        // Another account's new key is dropped too, and makes it incomplete.
        #expect(upsert(&state, "a.example", account: "other").accountBecameIncomplete)
        #expect(state.incompleteAccounts == ["acct", "other"])
    }

    @Test func anAccountWideDeleteIsNeverDroppedAndMakesTheAccountCompleteAgain() {
        var state = WriteBehindState(earlyFlushThreshold: 1_000, maxPendingChanges: 2)
        _ = upsert(&state, "a.example")
        _ = upsert(&state, "b.example")
        #expect(upsert(&state, "c.example").dropped)
        #expect(upsert(&state, "a.example", account: "other").dropped)
        #expect(state.removeAll(account: "acct").dropped == false)
        #expect(state.pending == 1)
        #expect(state.incompleteAccounts == ["other"])
        #expect(upsert(&state, "c.example").dropped == false)  // room again
    }

    @Test func changesBeingCommittedCountAgainstTheBoundAndAFailedBatchComesBackWithinIt() {
        var state = WriteBehindState(earlyFlushThreshold: 1_000, maxPendingChanges: 4)
        for host in ["a.example", "b.example", "c.example"] { _ = upsert(&state, host) }
        let taken = state.takeBatch()
        #expect(state.pending == 3)  // in flight
        #expect(upsert(&state, "d.example").dropped == false)
        #expect(upsert(&state, "e.example").dropped)
        #expect(upsert(&state, "a.example").dropped)  // queued only in the taken batch: a new key here
        state.requeue(taken)
        #expect(state.pending == 4)
        #expect(state.droppedWrites == 2)

        let again = state.takeBatch()
        #expect(again.count == 4)
        state.committed()
        #expect(state.pending == 0)
        #expect(upsert(&state, "e.example").dropped == false)
    }

    @Test func withoutABoundNothingIsDropped() {
        var state = WriteBehindState(earlyFlushThreshold: 1_000_000)
        for index in 0..<10_000 { _ = upsert(&state, "h\(index).example") }
        #expect(state.pending == 10_000)
        #expect(state.droppedWrites == 0)
    }
}
