import Glibc
import HTTPDNSCore
import Testing

@testable import HTTPDNSServer

/// The read-deadline rule and the accept-time limits, without sockets.
@Suite struct ConnectionLimitTests {
    let rule = ReadDeadline(requestReadTimeout: 10_000, idleTimeout: 30_000)

    @Test func aRequestMustArriveWholeWithinTheDeadlineWhateverThePaceOfItsBytes() {
        #expect(rule.deadline(.opening, since: 1_000) == 11_000)
        #expect(rule.deadline(.reading, since: 50_000) == 60_000)
        // Waiting for the next request: the idle timeout, then a request's worth of reading.
        #expect(rule.deadline(.idle, since: 0) == 40_000)
        // A request being answered (or suspended for an upstream) is not the reader's fault.
        #expect(rule.deadline(.handling, since: 0) == nil)
        #expect(ReadDeadline(requestReadTimeout: 0, idleTimeout: 30_000).deadline(.opening, since: 0) == nil)
    }

    @Test func theFirstRequestKeepsTheDeadlineFromTheAcceptAndLaterOnesStartAtTheirRequestLine() {
        #expect(ReadDeadline.afterRequestLine(.opening) == nil)
        #expect(ReadDeadline.afterRequestLine(.idle) == .reading)
        #expect(ReadDeadline.afterRequestLine(.handling) == nil)
    }

    func tracker(limit: Int = 100, perAddress: Int = 2, trusted: [CIDR] = []) -> ConnectionTracker {
        ConnectionTracker(
            limits: .init(connectionLimit: limit, perAddress: perAddress, trustedProxies: trusted, deadline: rule),
            certificates: nil)
    }

    @Test func anAddressOverItsLimitIsRefusedOthersAndTrustedProxiesAreNot() {
        let tracker = tracker(trusted: [CIDR("10.0.0.0/8")!])
        let attacker = PeerAddress("192.0.2.1")!
        for _ in 0..<2 { tracker.register(peer: attacker) }
        #expect(!tracker.admit(attacker))
        #expect(tracker.rejectedPerAddress == 1)
        #expect(tracker.admit(PeerAddress("192.0.2.2")!))
        let proxy = PeerAddress("10.1.2.3")!
        for _ in 0..<5 { tracker.register(peer: proxy) }
        #expect(tracker.admit(proxy))
    }

    @Test func atTheGlobalLimitEveryoneIsRefusedUntilOneCloses() {
        let tracker = tracker(limit: 3, perAddress: 0)
        let records = (1...3).map { tracker.register(peer: PeerAddress("192.0.2.\($0)")!) }
        #expect(!tracker.admit(PeerAddress("198.51.100.1")!))
        #expect(tracker.rejectedAtLimit == 1)
        tracker.unregister(records[0])
        #expect(tracker.admit(PeerAddress("198.51.100.1")!))
    }
}

extension ConnectionLimitTests {
    @Test func theReaperShutsDownOnlyConnectionsPastTheirDeadline() throws {
        let tracker = tracker(perAddress: 0)
        var slow: [Int32] = [0, 0]
        var answered: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &slow) == 0)
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &answered) == 0)
        defer { for fd in slow + answered { close(fd) } }
        let now = ConnectionTracker.now()
        tracker.register(peer: nil, fd: slow[0], since: now - 20_000)
        let handling = tracker.register(peer: nil, fd: answered[0], since: now - 20_000)
        handling.enter(.handling, at: 0)
        tracker.reap(now: now)
        #expect(tracker.closedSlow == 1)
        var byte: UInt8 = 0
        #expect(recv(slow[1], &byte, 1, Int32(MSG_DONTWAIT)) == 0, "the peer of a cut connection reads end of file")
        #expect(recv(answered[1], &byte, 1, Int32(MSG_DONTWAIT)) == -1 && errno == EAGAIN, "a connection being answered is left alone")
        // Cut once only.
        tracker.reap(now: now + 1000)
        #expect(tracker.closedSlow == 1)
    }
}
