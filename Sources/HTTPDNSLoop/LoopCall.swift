#if canImport(Glibc)
    import Glibc
#endif

/// The one place the event loops (curl's, c-ares', the speed prober's, Redis') check what their
/// system calls (`epoll_*`, `poll`, `pipe`) return: -1 (retried on `EINTR`) becomes a
/// `LoopCall.Failure` naming the call. Each C library adds its own check beside this one (curl's
/// `CURLMcode` in HTTPDNSUpstream, hiredis' results in HTTPDNSRedis). What the loop does with a
/// failure is decided where the call is made (fail the work, report it through `LoopServices`,
/// or stop at start-up); nothing is ignored.
package enum LoopCall {
    /// A failed call: its name and what the library or the kernel said.
    package struct Failure: Error, CustomStringConvertible {
        package var call: String
        package var detail: String
        /// The system call's `errno` (0 for a library's failures).
        package var errorNumber: Int32 = 0
        package var description: String { "\(call) failed: \(detail)" }

        package init(call: String, detail: String, errorNumber: Int32 = 0) {
            self.call = call
            self.detail = detail
            self.errorNumber = errorNumber
        }
    }

    /// Runs a system call that returns -1 and sets `errno` on failure; retries on `EINTR`.
    @discardableResult
    package static func system<Result: FixedWidthInteger & SignedInteger>(_ call: StaticString, _ body: () -> Result) throws(Failure)
        -> Result
    {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = errno
            if code == EINTR { continue }
            throw Failure(call: "\(call)", detail: "\(String(cString: strerror(code))) (errno \(code))", errorNumber: code)
        }
    }

    /// Puts `fd` in non-blocking mode (leaving it as it is when it already is).
    package static func makeNonBlocking(_ fd: Int32) throws(Failure) {
        let flags = try system("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
        if flags & O_NONBLOCK == 0 { try system("fcntl(F_SETFL, O_NONBLOCK)") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) } }
    }
}
