import Synchronization

/// Work on cache keys with at most `concurrency` in flight: background refreshes (scheduled
/// prefetch, refresh on demand) and preloads. A key already queued is not queued twice; the
/// queue holds at most `capacity` keys and drops the excess (the next scheduler tick finds
/// refreshes again; a preload is bounded far below).
public final class KeyQueue: Sendable {
    /// Starts the work on one key and calls `done` exactly once when it has ended (at once
    /// when nothing was started).
    public typealias Start = @Sendable (_ key: CacheKey, _ done: @escaping @Sendable () -> Void) -> Void

    private struct State: Sendable {
        var pending: [CacheKey] = []
        var head = 0
        var queued: Set<CacheKey> = []
        var inFlight = 0
        var pumping = false
        var pumpAgain = false
    }

    public let concurrency: Int
    public let capacity: Int
    private let state = Mutex(State())
    private let start: Start

    public init(concurrency: Int, capacity: Int = 1_000_000, start: @escaping Start) {
        self.concurrency = max(1, concurrency)
        self.capacity = capacity
        self.start = start
    }

    /// Queues `keys`; returns how many were newly queued.
    @discardableResult
    public func enqueue(_ keys: [CacheKey]) -> Int {
        let added = state.withLock { state -> Int in
            var added = 0
            for key in keys where state.pending.count - state.head < capacity && state.queued.insert(key).inserted {
                state.pending.append(key)
                added += 1
            }
            return added
        }
        if added > 0 { pump() }
        return added
    }

    /// Keys waiting to start plus work in flight.
    public var backlog: Int { state.withLock { $0.pending.count - $0.head + $0.inFlight } }

    /// Starts work until the window is full. A call made while another is pumping (work that
    /// finished synchronously) only asks it to look again, so recursion stays flat.
    private func pump() {
        let shouldRun = state.withLock { state -> Bool in
            if state.pumping {
                state.pumpAgain = true
                return false
            }
            state.pumping = true
            return true
        }
        guard shouldRun else { return }
        while true {
            let next: CacheKey?? = state.withLock { state in
                guard state.head < state.pending.count, state.inFlight < concurrency else {
                    if state.pumpAgain {
                        state.pumpAgain = false
                        return .some(nil)
                    }
                    state.pumping = false
                    if state.head == state.pending.count {
                        state.pending.removeAll(keepingCapacity: state.pending.count < 4096)
                        state.head = 0
                    }
                    return nil
                }
                let key = state.pending[state.head]
                state.head += 1
                state.queued.remove(key)
                state.inFlight += 1
                return .some(key)
            }
            guard let next else { return }
            guard let key = next else { continue }
            start(key) { [self] in
                state.withLock { $0.inFlight -= 1 }
                pump()
            }
        }
    }
}
