import Foundation
import HTTPDNSLoop

/// A thread standing in for an HTTP thread (`HTTPLoop`) for the tests of a `LoopGuest`: its own
/// epoll set, the guest `makeGuest` creates on it, turned as `HTTPLoop` turns its guest (only
/// while the guest is not idle; a wait of at most 20 ms between turns). `start` runs on the
/// thread once the guest exists, `step` before each turn; the loop ends when `done` holds (or
/// after 30 s, a hang guard), then the guest is shut down and `after` runs on the thread.
/// Returns the thread's identity (`pthread_self()`), for checking where completions ran.
package enum GuestHostThread {
    package static func run(
        report: @escaping @Sendable (LoopCall.Failure) -> Void,
        makeGuest: @escaping @Sendable (EpollSet) -> any LoopGuest,
        start: @escaping @Sendable (any LoopGuest) -> Void = { _ in },
        step: @escaping @Sendable () -> Void = {},
        until done: @escaping @Sendable () -> Bool,
        after: @escaping @Sendable () -> Void = {}
    ) async -> UInt {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                let wake = WakePipe(services: LoopServices(nameThread: { _ in }, report: report))
                let sockets = EpollSet(wake: wake, name: "test host")
                let guest = makeGuest(sockets)
                start(guest)
                let until = MonotonicTime.now() + 30
                while !done() && MonotonicTime.now() < until {
                    step()
                    let now = MonotonicTime.milliseconds()
                    let next = guest.isIdle ? nil : guest.turn(now: now)
                    let wait = next.map { Int32(clamping: max(0, min(20, $0 - now))) } ?? 20
                    _ = sockets.wait(milliseconds: wait) { _ = guest.handle($0) }
                }
                guest.shutdown()
                after()
                sockets.close()
                continuation.resume(returning: UInt(pthread_self()))
            }
            thread.start()
        }
    }
}
