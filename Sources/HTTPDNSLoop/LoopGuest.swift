/// Work that rides on another component's event-loop thread: descriptors in that loop's epoll
/// set, deadlines, and work started from inside the loop's callbacks, which the host runs at the
/// end of its turn (never re-entering the guest from one of its own callbacks).
///
/// The HTTP server's loop threads carry the upstream HTTP/1.1 client this way, so that the thread
/// that reads a request also makes its upstream exchange and writes its answer, without handing
/// the request to another thread and back. Confined to the host's loop thread.
package protocol LoopGuest: AnyObject {
    /// Handles `ready` when its descriptor is the guest's; false when it is not.
    func handle(_ ready: EpollSet.Readiness) -> Bool
    /// Starts the work submitted since the last call. The host calls it after each of its
    /// callbacks and event batches, before it waits again.
    func runPending()
    /// Whether `runPending` has work: the host then does not wait before calling it.
    var hasPending: Bool { get }
    /// The earliest deadline the guest keeps (monotonic milliseconds), nil for none.
    func nextDeadline() -> Int64?
    /// Ends the work whose deadline is at or before `now`.
    func expire(now: Int64)
    /// The host loop is ending: fails what is running and waiting, releases the descriptors.
    func shutdown()
}
