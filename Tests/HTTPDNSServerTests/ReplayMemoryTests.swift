import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// The replay memory of signed changes without Redis: a signature is accepted once, and no one
/// key or client can fill the memory for the others.
@Suite struct ReplayMemoryTests {
    static let clientA = PeerAddress("127.0.0.2")!
    static let clientB = PeerAddress("127.0.0.3")!

    private func signature(_ number: Int) -> [UInt8] { Array("sig-\(number)".utf8) }

    @Test func aSignatureIsAcceptedOnceWithinItsValidity() {
        var memory = ReplayMemory(capacity: 8)
        #expect(memory.use(signature(1), expiry: 100, key: "m1", client: Self.clientA, now: 0) == .accepted)
        #expect(memory.use(signature(1), expiry: 100, key: "m1", client: Self.clientB, now: 50) == .replayed)
        #expect(memory.use(signature(1), expiry: 200, key: "m1", client: Self.clientA, now: 101) == .accepted)
    }

    /// One key takes half of the memory at most: a second key still has room.
    @Test func oneKeyCannotTakeTheWholeMemory() {
        var memory = ReplayMemory(capacity: 8)
        let clients = (10..<14).map { PeerAddress("127.0.0.\($0)")! }
        for (index, client) in clients.enumerated() {
            #expect(memory.use(signature(index), expiry: 100 + Double(index), key: "m1", client: client, now: 0) == .accepted)
        }
        #expect(memory.use(signature(9), expiry: 100, key: "m1", client: Self.clientB, now: 0) == .full(.key, until: 100))
        #expect(memory.use(signature(10), expiry: 100, key: "m2", client: Self.clientB, now: 0) == .accepted)
    }

    /// One client takes a quarter at most: another client of the same key still has room, and
    /// the first gets room again as its signatures expire.
    @Test func oneClientCannotTakeTheWholeMemory() {
        var memory = ReplayMemory(capacity: 8)
        #expect(memory.use(signature(1), expiry: 30, key: "m1", client: Self.clientA, now: 0) == .accepted)
        #expect(memory.use(signature(2), expiry: 60, key: "m1", client: Self.clientA, now: 0) == .accepted)
        #expect(memory.use(signature(3), expiry: 60, key: "m1", client: Self.clientA, now: 0) == .full(.client, until: 30))
        #expect(memory.use(signature(4), expiry: 60, key: "m1", client: Self.clientB, now: 0) == .accepted)
        #expect(memory.use(signature(3), expiry: 90, key: "m1", client: Self.clientA, now: 31) == .accepted)
        #expect(memory.count == 3)
    }

    /// The whole memory still bounds everything (many keys and clients).
    @Test func theMemoryIsBoundedAndRefillsAsSignaturesExpire() {
        var memory = ReplayMemory(capacity: 4)
        for index in 0..<4 {
            let client = PeerAddress("127.0.1.\(index)")!
            #expect(memory.use(signature(index), expiry: 10 + Double(index), key: "k\(index)", client: client, now: 0) == .accepted)
        }
        #expect(memory.use(signature(5), expiry: 50, key: "k5", client: nil, now: 0) == .full(.account, until: 10))
        #expect(memory.use(signature(5), expiry: 50, key: "k5", client: nil, now: 11) == .accepted)
        #expect(memory.count == 4)
    }

    // Each signature below with a key of its own and no client: the account's bound alone.

    @Test func aSignatureIsAcceptedOnceUntilItExpires() {
        var memory = ReplayMemory(capacity: 4)
        #expect(memory.use([1], expiry: 100, key: "k1", client: nil, now: 10) == .accepted)
        #expect(memory.use([1], expiry: 100, key: "k1", client: nil, now: 50) == .replayed)
        #expect(memory.use([1], expiry: 100, key: "k1", client: nil, now: 100) == .replayed)
        // Past its expiry the signature itself is refused as expired; the memory may forget it.
        #expect(memory.use([1], expiry: 100, key: "k1", client: nil, now: 101) == .accepted)
    }

    @Test func whenFullOfLiveSignaturesANewOneIsRefusedNotForgotten() {
        var memory = ReplayMemory(capacity: 3)
        for byte in UInt8(1)...3 {
            #expect(memory.use([byte], expiry: 100 + Double(byte), key: "k\(byte)", client: nil, now: 10) == .accepted)
        }
        #expect(memory.use([9], expiry: 200, key: "k9", client: nil, now: 20) == .full(.account, until: 101))
        // Every remembered signature is still refused.
        for byte in UInt8(1)...3 {
            #expect(memory.use([byte], expiry: 100 + Double(byte), key: "k\(byte)", client: nil, now: 20) == .replayed)
        }
        #expect(memory.count == 3)
    }

    @Test func expiredEntriesAreDroppedToMakeRoom() {
        var memory = ReplayMemory(capacity: 3)
        #expect(memory.use([1], expiry: 50, key: "k1", client: nil, now: 10) == .accepted)
        #expect(memory.use([2], expiry: 60, key: "k2", client: nil, now: 10) == .accepted)
        #expect(memory.use([3], expiry: 200, key: "k3", client: nil, now: 10) == .accepted)
        #expect(memory.use([4], expiry: 200, key: "k4", client: nil, now: 55) == .accepted)
        #expect(memory.count == 3)
        #expect(memory.use([2], expiry: 60, key: "k2", client: nil, now: 56) == .replayed)
        #expect(memory.use([3], expiry: 200, key: "k3", client: nil, now: 56) == .replayed)
    }
}
