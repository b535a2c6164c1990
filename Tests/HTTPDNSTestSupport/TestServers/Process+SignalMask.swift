import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Process {
    /// Starts the process with no signal blocked, whatever thread calls it.
    ///
    /// `Process.run()` spawns from the calling thread and the child inherits that thread's
    /// signal mask. Dispatch and cooperative-pool threads block SIGTERM and SIGINT, so a child
    /// started from one of them would ignore a SIGTERM (ours, or a `kill` in a script it runs).
    /// The calling thread's mask is cleared for the spawn and put back after it.
    public func runWithDefaultSignalMask() throws {
        var empty = sigset_t()
        var saved = sigset_t()
        sigemptyset(&empty)
        let status = pthread_sigmask(SIG_SETMASK, &empty, &saved)
        guard status == 0 else { throw HarnessError("pthread_sigmask failed: \(status)") }
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        try run()
    }
}
