import HTTPDNSCore
import Testing

@testable import HTTPDNSStore

@Suite struct PendingBatchTests {
    @Test func changesToOneKeyCoalesceAndTheLastWins() {
        var batch = PendingBatch()
        let key = Sample.key("a.example")
        batch.upsert(account: "acct", key: key, entry: Sample.entry(["192.0.2.1"]))
        batch.upsert(account: "acct", key: key, entry: Sample.entry(["192.0.2.2"]))
        #expect(batch.count == 1)
        #expect(batch.accounts["acct"]?.changes[key] == .upsert(Sample.entry(["192.0.2.2"])))
        batch.remove(account: "acct", key: key)
        #expect(batch.count == 1)
        #expect(batch.accounts["acct"]?.changes[key] == .remove)
    }

    @Test func removeAllReplacesOnlyThatAccountsQueuedChanges() {
        var batch = PendingBatch()
        batch.upsert(account: "a", key: Sample.key("x.example"), entry: Sample.entry(["192.0.2.1"]))
        batch.upsert(account: "a", key: Sample.key("y.example"), entry: Sample.entry(["192.0.2.1"]))
        batch.upsert(account: "b", key: Sample.key("x.example"), entry: Sample.entry(["192.0.2.1"]))
        batch.removeAll(account: "a")
        #expect(batch.accounts["a"] == PendingAccountChanges(removesAll: true))
        #expect(batch.accounts["b"]?.changes.count == 1)
        #expect(batch.count == 2)
    }

    @Test func aRequeuedOlderBatchNeverOverridesNewerChanges() {
        let x = Sample.key("x.example"), y = Sample.key("y.example")
        var older = PendingBatch()
        older.upsert(account: "a", key: x, entry: Sample.entry(["192.0.2.1"]))
        older.upsert(account: "a", key: y, entry: Sample.entry(["192.0.2.1"]))
        older.upsert(account: "b", key: x, entry: Sample.entry(["192.0.2.1"]))
        var newer = PendingBatch()
        newer.upsert(account: "a", key: x, entry: Sample.entry(["192.0.2.2"]))
        newer.removeAll(account: "b")
        newer.mergeOlder(older)
        #expect(newer.accounts["a"]?.changes == [x: .upsert(Sample.entry(["192.0.2.2"])), y: .upsert(Sample.entry(["192.0.2.1"]))])
        #expect(newer.accounts["b"] == PendingAccountChanges(removesAll: true))
        #expect(newer.count == 3)
    }

    /// A batch is written in the table's primary-key order: host, family, network, the texts by
    /// their bytes (SQLite's BINARY collation), a prefix before what extends it.
    @Test func changesAreWrittenInPrimaryKeyOrder() {
        let expected = [
            CacheKey(host: HostName("a-b.example")!, family: .a),  // "-" is 0x2D, "." 0x2E
            CacheKey(host: HostName("a.example")!, family: .a),
            CacheKey(host: HostName("a.example")!, family: .a, network: "10.0.0.0/24"),
            CacheKey(host: HostName("a.example")!, family: .a, network: "9.0.0.0/24"),
            CacheKey(host: HostName("a.example")!, family: .aaaa),
            CacheKey(host: HostName("a.example.test")!, family: .a),
            CacheKey(host: HostName("b.example")!, family: .a),
        ]
        for _ in 0..<20 {
            #expect(StoreWriter.inKeyOrder(expected.shuffled()) == expected)
        }
        #expect(StoreWriter.inKeyOrder([CacheKey]()).isEmpty)
    }
}
