import Glibc
import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// When the listener is full, which connection gives way to a newcomer (`ConnectionTable`), and
/// the per-client keying of the connection limits, without a server.
@Suite struct ConnectionSheddingTests {
    private func connection(_ client: String?, _ phase: ReadDeadline.Phase = .opening, since: Int = 0) -> TrackedConnection {
        let record = TrackedConnection(fd: -1, client: client.flatMap(PeerAddress.init), certificates: nil, since: since)
        record.enter(phase, at: since)
        return record
    }

    @Test func aFullListenerShedsTheLeastUsefulConnectionOfTheClientHoldingTheMost() throws {
        var table = ConnectionTable()
        let answering = connection("192.0.2.1", .handling, since: 1)
        let trickling = connection("192.0.2.1", .opening, since: 2)
        let idleLong = connection("192.0.2.1", .idle, since: 3)
        let idleShort = connection("192.0.2.1", .idle, since: 9)
        let other = connection("192.0.2.2", .idle, since: 0)
        for record in [answering, trickling, idleLong, idleShort, other] { table.add(record) }
        // Idle before receiving, the longest idle first; then the one receiving the longest.
        let newcomer = PeerAddress("198.51.100.7")!
        for expected in [idleLong, idleShort, trickling] {
            guard case .shed(let victim) = table.admit(newcomer, connectionLimit: 5, perClient: 0) else {
                Issue.record("not shed")
                return
            }
            #expect(victim === expected)
            table.add(connection("198.51.100.7"))
        }
        // Shut-down connections no longer count; the one being answered is never shed.
        #expect(table.occupied == 5)
        guard case .atLimit = table.admit(PeerAddress("198.51.100.8")!, connectionLimit: 5, perClient: 0) else {
            Issue.record("the connection being answered was shed")
            return
        }
        // Their closes arrive: the table forgets them.
        for record in [idleLong, idleShort, trickling] { table.remove(record) }
        #expect(table.open.count == 5 && table.occupied == 5 && table.held(by: PeerAddress("192.0.2.1")!) == 1)
    }

    @Test func equalsAreNotShedForEachOtherAndTrustedProxiesAreNeverShed() {
        var table = ConnectionTable()
        for client in ["192.0.2.1", "192.0.2.2", "192.0.2.2"] { table.add(connection(client)) }
        // Holding 1 against 2: shedding would only move the unfairness.
        guard case .atLimit = table.admit(PeerAddress("192.0.2.1")!, connectionLimit: 3, perClient: 0) else {
            Issue.record("shed between near equals")
            return
        }
        var proxied = ConnectionTable()
        for _ in 0..<3 { proxied.add(connection(nil, .idle)) }
        guard case .atLimit = proxied.admit(PeerAddress("198.51.100.1")!, connectionLimit: 3, perClient: 0) else {
            Issue.record("a trusted proxy's connection was shed")
            return
        }
    }

    @Test func theClientHoldingTheMostIsFollowedAsConnectionsComeAndGo() {
        var table = ConnectionTable()
        let first = (0..<4).map { _ in connection("192.0.2.1", .idle) }
        let second = (0..<3).map { _ in connection("192.0.2.2", .idle) }
        for record in first + second { table.add(record) }
        for record in first.prefix(3) { table.remove(record) }
        // 192.0.2.1 holds 1, 192.0.2.2 holds 3: the latter gives way.
        guard case .shed(let victim) = table.admit(PeerAddress("198.51.100.1")!, connectionLimit: 4, perClient: 0) else {
            Issue.record("not shed")
            return
        }
        #expect(victim.client == PeerAddress("192.0.2.2"))
    }

    private func tracker(limit: Int, perAddress: Int, keying: ClientKeying = ClientKeying()) -> ConnectionTracker {
        ConnectionTracker(
            limits: .init(
                connectionLimit: limit, perAddress: perAddress, trustedProxies: [],
                deadline: ReadDeadline(requestReadTimeout: 10_000, idleTimeout: 30_000), keying: keying),
            certificates: nil)
    }

    @Test func theTrackerShutsTheShedConnectionDownAndAdmitsTheNewcomer() {
        let tracker = tracker(limit: 2, perAddress: 0)
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { for fd in pair { close(fd) } }
        tracker.register(peer: PeerAddress("192.0.2.1")!, fd: pair[0])
        tracker.register(peer: PeerAddress("192.0.2.1")!)
        #expect(tracker.admit(PeerAddress("198.51.100.1")!))
        #expect(tracker.shed == 1 && tracker.rejectedAtLimit == 0)
        var byte: UInt8 = 0
        #expect(recv(pair[1], &byte, 1, Int32(MSG_DONTWAIT)) == 0, "the shed connection's peer reads end of file")
    }

    @Test func anIPv6ClientsConnectionsCountPerSlash64() {
        let tracker = tracker(limit: 100, perAddress: 2)
        tracker.register(peer: PeerAddress("2001:db8:1:2::1")!)
        tracker.register(peer: PeerAddress("2001:db8:1:2::2")!)
        #expect(!tracker.admit(PeerAddress("2001:db8:1:2:ffff::3")!))
        #expect(tracker.admit(PeerAddress("2001:db8:1:3::1")!))
        let perAddress = self.tracker(limit: 100, perAddress: 2, keying: ClientKeying(ipv6PrefixLength: 128))
        perAddress.register(peer: PeerAddress("2001:db8:1:2::1")!)
        perAddress.register(peer: PeerAddress("2001:db8:1:2::2")!)
        #expect(perAddress.admit(PeerAddress("2001:db8:1:2::3")!))
    }
}
