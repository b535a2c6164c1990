import Synchronization

/// Collects a fixed number of outcomes that arrive on any thread, and calls `completion` once,
/// with all of them in slot order, when the last one is in.
public final class OutcomeGather<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var values: [Value?]
        var missing: Int
    }

    private let state: Mutex<State>
    private let completion: @Sendable ([Value]) -> Void

    public init(count: Int, completion: @escaping @Sendable ([Value]) -> Void) {
        state = Mutex(State(values: Array(repeating: nil, count: count), missing: count))
        self.completion = completion
        if count == 0 { completion([]) }
    }

    /// Fills `slot`. The call that fills the last slot runs `completion` (outside the lock).
    public func fill(_ slot: Int, with value: Value) {
        let finished: [Value]? = state.withLock { state in
            guard state.values[slot] == nil else { return nil }
            state.values[slot] = value
            state.missing -= 1
            return state.missing == 0 ? state.values.map { $0! } : nil
        }
        if let finished { completion(finished) }
    }
}
