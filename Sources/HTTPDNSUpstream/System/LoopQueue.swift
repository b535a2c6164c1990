import Synchronization

/// What callers and one loop thread (the c-ares resolver's, the speed prober's) share: the queue
/// of work behind a lock, the flags of shutting down, a wake-up pipe, and the thread's identity
/// so that `shutdown()` never waits for itself.
final class LoopQueue<Item: Sendable>: Sendable {
    struct State {
        var pending: [Item] = []
        var stopRequested = false
        var isShutdown = false
    }

    let state = Mutex(State())
    let wake = WakePipe()
    /// The loop thread's `pthread_self()`.
    let loopThread = Atomic<UInt>(0)

    /// Queues `item` and wakes the thread; false once the loop is stopping or stopped.
    func enqueue(_ item: Item) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopRequested, !state.isShutdown else { return false }
            state.pending.append(item)
            return true
        }
        if accepted { wake.signal() }
        return accepted
    }

    /// Asks the thread to stop; true the first time.
    func requestStop() -> Bool {
        let first = state.withLock { state -> Bool in
            guard !state.stopRequested else { return false }
            state.stopRequested = true
            return true
        }
        if first { wake.signal() }
        return first
    }
}
