import Synchronization

/// Lets a test await a number of callbacks that arrive on other threads, without sleeping.
final class Countdown: Sendable {
    private struct State {
        var remaining: Int
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state: Mutex<State>

    init(_ count: Int) { state = Mutex(State(remaining: count)) }

    /// Counts one callback; the last one wakes the waiter.
    func tick() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    var remaining: Int { state.withLock { $0.remaining } }

    /// Returns once every expected callback has arrived (use with a `.timeLimit` trait).
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.remaining <= 0 { return true }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}
