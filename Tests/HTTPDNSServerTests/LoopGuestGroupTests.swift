import HTTPDNSLoop
import Testing

/// A guest of a test: its work is a count of items given and not yet started; its descriptor a
/// number no other guest of the group uses; its completions can give work to another guest.
private final class CountingGuest: LoopGuest {
    let fd: Int32
    var given = 0
    var running = 0
    var deadline: Int64?
    var turns = 0
    var handled = 0
    var shutDown = false
    /// Run for each item a turn starts (as a completion may give work to another guest).
    var onStart: () -> Void = {}

    init(fd: Int32) {
        self.fd = fd
    }

    var isIdle: Bool { given == 0 && running == 0 }
    var hasPending: Bool { given > 0 }

    func handle(_ ready: EpollSet.Readiness) -> Bool {
        guard ready.fd == fd else { return false }
        handled += 1
        return true
    }

    func turn(now: Int64) -> Int64? {
        turns += 1
        let starting = given
        given = 0
        running += starting
        for _ in 0..<starting { onStart() }
        return running > 0 ? deadline : nil
    }

    func shutdown() { shutDown = true }
}

/// `LoopGuestGroup`: the guests of one HTTP thread (the upstream client, the Redis tier's
/// connection) as the one guest `HTTPLoop` carries.
@Suite struct LoopGuestGroupTests {
    @Test func idleOnlyWhenEveryGuestIsAndOnlyBusyGuestsAreTurned() {
        let (first, second) = (CountingGuest(fd: 10), CountingGuest(fd: 11))
        let group = LoopGuestGroup([first, second])
        #expect(group.isIdle && !group.hasPending)
        second.given = 1
        #expect(!group.isIdle && group.hasPending)
        second.deadline = 500
        #expect(group.turn(now: 100) == 500)
        #expect((first.turns, second.turns) == (0, 1))
    }

    @Test func aReadyDescriptorGoesToTheGuestThatOwnsIt() {
        let (first, second) = (CountingGuest(fd: 10), CountingGuest(fd: 11))
        let group = LoopGuestGroup([first, second])
        #expect(group.handle(EpollSet.Readiness(fd: 11, readable: true, writable: false, failed: false)))
        #expect(!group.handle(EpollSet.Readiness(fd: 12, readable: true, writable: false, failed: false)))
        #expect((first.handled, second.handled) == (0, 1))
    }

    @Test func theEarliestDeadlineOfTheBusyGuestsIsTheGroups() {
        let (first, second) = (CountingGuest(fd: 10), CountingGuest(fd: 11))
        let group = LoopGuestGroup([first, second])
        (first.given, first.deadline) = (1, 900)
        (second.given, second.deadline) = (1, 300)
        #expect(group.turn(now: 100) == 300)
    }

    /// The second guest's turn gives the first (already turned) work: the group must be due
    /// again at once, or that work would wait for the next socket event or deadline.
    @Test func workGivenToAnEarlierGuestDuringTheTurnMakesTheGroupDueNow() {
        let (first, second) = (CountingGuest(fd: 10), CountingGuest(fd: 11))
        let group = LoopGuestGroup([first, second])
        second.onStart = { first.given += 1 }
        (first.deadline, second.given, second.deadline) = (900, 1, 700)
        #expect(group.turn(now: 100) == 100)
        #expect(group.turn(now: 120) == 700)
        #expect((first.running, first.turns) == (1, 1))
    }

    @Test func shutdownReachesEveryGuest() {
        let (first, second) = (CountingGuest(fd: 10), CountingGuest(fd: 11))
        LoopGuestGroup([first, second]).shutdown()
        #expect(first.shutDown && second.shutDown)
    }
}
