import Foundation

/// Waiting for something another process or thread does, without a bound on elapsed time that a
/// loaded machine can break.
public enum Poll {
    /// Looks at `condition` every `interval` until it holds (true), giving up (false) only once
    /// `limit` seconds have passed and it was looked at `minimumLooks` times. The limit guards
    /// against a hang; the count matters after a stall: when the loaded machine (or other tests
    /// blocking the cooperative pool) kept this task from running past the limit, the work it
    /// waits for was held up as well, and giving up at the first look after waking would give up
    /// before that work had its turn. Errors `condition` throws end the wait.
    public static func until(
        limit: Double, minimumLooks: Int = 20, every interval: Duration = .milliseconds(50), _ condition: () async throws -> Bool
    ) async rethrows -> Bool {
        var looks = Looks(limit: limit, minimum: minimumLooks)
        while true {
            if try await condition() { return true }
            if looks.spent() { return false }
            try? await Task.sleep(for: interval)
        }
    }

    /// `until` for code on a thread of its own (never on the cooperative pool, which a sleeping
    /// thread would hold): the thread sleeps between looks.
    public static func untilBlocking(
        limit: Double, minimumLooks: Int = 20, every interval: Duration = .milliseconds(50), _ condition: () throws -> Bool
    ) rethrows -> Bool {
        var looks = Looks(limit: limit, minimum: minimumLooks)
        while true {
            if try condition() { return true }
            if looks.spent() { return false }
            Thread.sleep(forTimeInterval: Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18)
        }
    }

    /// The looks a wait has had against its limit and its minimum count.
    private struct Looks {
        let deadline: Date
        let minimum: Int
        var count = 0

        init(limit: Double, minimum: Int) {
            deadline = Date().addingTimeInterval(limit)
            self.minimum = minimum
        }

        /// Counts one more look that failed; true when the wait gives up.
        mutating func spent() -> Bool {
            count += 1
            return Date() >= deadline && count >= minimum
        }
    }
}
