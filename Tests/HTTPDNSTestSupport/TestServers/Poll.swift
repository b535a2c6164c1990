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
        let deadline = Date().addingTimeInterval(limit)
        var looks = 0
        while true {
            if try await condition() { return true }
            looks += 1
            if Date() >= deadline && looks >= minimumLooks { return false }
            try? await Task.sleep(for: interval)
        }
    }
}
