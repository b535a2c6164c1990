/// What the event loops need from the service they run in and this module does not provide, as
/// it has no logger: naming a loop thread, and logging a failure a loop survives (a socket it
/// could not watch, a wake-up it could not send). Given to `LoopQueue.init`; HTTPDNSUpstream and
/// HTTPDNSRedis pass HTTPDNSCore's `ThreadName` and `EventLoopLog`.
package struct LoopServices: Sendable {
    /// Names the calling thread; a loop thread calls it first thing.
    package var nameThread: @Sendable (String) -> Void
    /// Logs a failure the loop survives and goes on after.
    package var report: @Sendable (LoopCall.Failure) -> Void

    package init(nameThread: @escaping @Sendable (String) -> Void, report: @escaping @Sendable (LoopCall.Failure) -> Void) {
        self.nameThread = nameThread
        self.report = report
    }
}
