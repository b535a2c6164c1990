import Foundation
import HTTPDNSLocks
import Synchronization

/// What callers and one loop thread (the curl loop's, the c-ares resolver's, the speed prober's)
/// share: the queue of work behind a lock, the flags of shutting down, a wake-up pipe, and the
/// thread's identity so that `shutdown()` never waits for itself.
package final class LoopQueue<Item: Sendable>: Sendable {
    package struct State {
        package var pending: [Item] = []
        package var stopRequested = false
        package var isShutdown = false
    }

    package let state = Mutex(State())
    package let wake: WakePipe
    /// The loop thread's `pthread_self()`.
    package let loopThread = Atomic<UInt>(0)
    /// Signalled when the loop thread's body returns.
    private let finished = DispatchSemaphore(value: 0)

    /// A queue whose thread and wake-up pipe use `services` to name the thread and log failures.
    package init(services: LoopServices) {
        wake = WakePipe(services: services)
    }

    /// Starts the loop thread, which runs `body` (the worker's loop) until it returns. The thread
    /// names itself `name` through `LoopServices.nameThread` first thing.
    package func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            wake.services.nameThread(name)
            loopThread.store(UInt(pthread_self()), ordering: .releasing)
            body()
            finished.signal()
        }
        thread.start()
    }

    /// Asks the thread to stop and waits until it has, unless called from the thread itself (a
    /// completion may shut its own loop down). Idempotent.
    package func stopAndWait() {
        guard requestStop(), loopThread.load(ordering: .acquiring) != UInt(pthread_self()) else { return }
        finished.wait()
    }

    /// Queues `item` and wakes the thread when the queue was empty; false once the loop is
    /// stopping or stopped. Items that join a queue the thread has not taken yet need no wake-up
    /// of their own: the one that made it non-empty is still pending (the thread drains the pipe
    /// before it takes, never after), so a burst costs the thread one wake-up and the callers one
    /// `write` instead of one each.
    package func enqueue(_ item: Item) -> Bool {
        let (accepted, first) = state.withLock { state -> (Bool, Bool) in
            guard !state.stopRequested, !state.isShutdown else { return (false, false) }
            state.pending.append(item)
            return (true, state.pending.count == 1)
        }
        if first { wake.signal() }
        return accepted
    }

    /// The loop thread's turn: everything queued since the last one, and whether to stop.
    package func take() -> (items: [Item], stop: Bool) {
        state.withLock { state in
            let items = state.pending
            state.pending.removeAll()
            return (items, state.stopRequested)
        }
    }

    /// The loop thread stops taking work: marks the queue shut down (`enqueue` refuses from now
    /// on) and returns what was still queued, for the thread to fail.
    package func close() -> [Item] {
        state.withLock { state in
            state.isShutdown = true
            let rest = state.pending
            state.pending.removeAll()
            return rest
        }
    }

    /// Asks the thread to stop; true the first time.
    package func requestStop() -> Bool {
        let first = state.withLock { state -> Bool in
            guard !state.stopRequested else { return false }
            state.stopRequested = true
            return true
        }
        if first { wake.signal() }
        return first
    }
}
