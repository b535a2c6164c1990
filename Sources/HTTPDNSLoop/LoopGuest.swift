/// Work that rides on another component's event-loop thread: descriptors in that loop's epoll
/// set, deadlines, and work started from inside the loop's callbacks, which the host starts at
/// its next turn (never re-entering the guest from one of its own callbacks).
///
/// The HTTP server's loop threads carry the upstream HTTP/1.1 client this way, so that the thread
/// that reads a request also makes its upstream exchange and writes its answer, without handing
/// the request to another thread and back. Confined to the host's loop thread.
package protocol LoopGuest: AnyObject {
    /// Whether the guest has nothing to start and nothing running: the host then skips its turn,
    /// and the clock.
    var isIdle: Bool { get }
    /// Whether work was given since the guest's last turn (only a turn starts it).
    var hasPending: Bool { get }
    /// Handles `ready` when its descriptor is the guest's; false when it is not.
    func handle(_ ready: EpollSet.Readiness) -> Bool
    /// One turn of the host's loop, before it waits (`now`: monotonic milliseconds): starts the
    /// work submitted since the last turn, ends the work whose deadline is at or before `now`,
    /// and returns when the guest next needs a turn (its earliest deadline; `now` or earlier when
    /// work is waiting to start; nil for never). One call per turn: the host's idle turns, every
    /// cache hit's among them, pay only ``isIdle``.
    func turn(now: Int64) -> Int64?
    /// The host loop is ending: fails what is running and waiting, releases the descriptors.
    func shutdown()
}
