import CCurl
#if canImport(Glibc)
import Glibc
#endif
import HTTPDNSCore

/// The one place the upstream event loops check what `curl_multi_*` and their system calls
/// (`epoll_*`, `poll`) return: a `CURLMcode` other than `CURLM_OK`, or -1 from a system call (retried on `EINTR`),
/// becomes a `LoopCall.Failure` naming the call. What the loop does with one is decided where
/// the call is made (fail the transfer, report it, or stop at start-up); nothing is ignored.
enum LoopCall {
    /// A failed call: its name and what curl or the kernel said.
    struct Failure: Error, CustomStringConvertible {
        var call: String
        var detail: String
        /// The system call's `errno` (0 for curl's failures).
        var errorNumber: Int32 = 0
        var description: String { "\(call) failed: \(detail)" }
    }

    /// Checks a `curl_multi_*` result.
    static func multi(_ code: CURLMcode, _ call: StaticString) throws(Failure) {
        guard code != CURLM_OK else { return }
        throw Failure(call: "\(call)", detail: "\(String(cString: curl_multi_strerror(code))) (CURLMcode \(code.rawValue))")
    }

    /// Runs a system call that returns -1 and sets `errno` on failure; retries on `EINTR`.
    @discardableResult
    static func system<Result: FixedWidthInteger & SignedInteger>(_ call: StaticString, _ body: () -> Result) throws(Failure) -> Result {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = errno
            if code == EINTR { continue }
            throw Failure(call: "\(call)", detail: "\(String(cString: strerror(code))) (errno \(code))", errorNumber: code)
        }
    }

    private static let throttle = LogThrottle(interval: 10)

    /// Logs a failure the loop survives (a socket it could not watch, an action curl refused):
    /// one line per call every 10 s at most, with the count held back.
    static func report(_ failure: Failure) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        guard let suppressed = throttle.admit(failure.call, now: Double(now.tv_sec)) else { return }
        let more = suppressed > 0 ? " (\(suppressed) more since the last report)" : ""
        Log.error("event loop: \(failure)\(more)")
    }
}
