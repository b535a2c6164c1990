import CMicroHTTPD
import Dispatch
import HTTPDNSCore
import HTTPDNSLoop
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP thread: a libmicrohttpd daemon in external polling mode, run from this thread's own
/// epoll set (the daemon's epoll descriptor is one entry of it), and the guest that rides on the
/// thread (the upstream HTTP/1.1 client, and with Redis the shared tier's connection), whose
/// sockets are entries of the same set.
///
/// With libmicrohttpd's own thread pool a cache miss crossed threads twice: the pool thread
/// handed the request to the upstream loop's thread and the answer came back through the
/// daemon's wake-up. Here the thread that reads a request also sends it upstream (the guest),
/// reads the upstream's answer and writes the response: one thread, woken only by its sockets.
///
/// A turn: run the daemon when its descriptor was ready, its timeout came or a connection was
/// resumed (by the guest's completions, or by another thread), give the guest its turn (it starts
/// what the daemon's callbacks gave it and ends what is overdue), then wait for the earlier of the
/// daemon's timeout and the guest's next turn.
final class HTTPLoop: Sendable {
    /// What other threads ask of the loop.
    enum Command: Sendable {
        /// Stop accepting: `MHD_quiesce_daemon` on the loop's own thread (never while it may be
        /// inside `MHD_run`), then `done` is signalled.
        case quiesce(done: DispatchSemaphore)
        /// Work given back to this thread (`OriginLoop`): run at the loop's next turn.
        case run(@Sendable () -> Void)
    }

    /// The daemon, started by the server in external polling mode.
    nonisolated(unsafe) let daemon: OpaquePointer
    private let queue = LoopQueue<Command>(
        services: LoopServices(nameThread: { ThreadName.setCurrent($0) }, report: { HTTPLoop.report($0) }))
    private let makeGuest: (@Sendable (EpollSet) -> any LoopGuest)?
    /// A connection of the daemon was resumed since the loop last ran it. libmicrohttpd in
    /// external polling mode does not wake its caller for a resume: `connectionResumed` does.
    private let resumed = Atomic<Bool>(false)

    /// This thread as the engine's `OriginLoop`: registered on the thread while it runs.
    private let origin: OriginLoop

    /// The daemon's suspended connections by their context's identity; nil once the server
    /// stopped resuming. One table per thread: a miss suspends and resumes its connection on the
    /// thread that read it, so the lock is contended only by a responder on another thread (a
    /// refresh, a preload's overflow) and by the server's stop, never by the other HTTP threads.
    let locked_suspended = Mutex<[ObjectIdentifier: SuspendedConnection]?>([:])

    init(daemon: OpaquePointer, makeGuest: (@Sendable (EpollSet) -> any LoopGuest)?) {
        self.daemon = daemon
        self.makeGuest = makeGuest
        origin = OriginLoop { [queue] job in queue.enqueue(.run(job)) }
    }

    func start(named name: String) {
        queue.startThread(named: name) { [self] in run() }
    }

    /// Stops accepting connections, on the loop's thread; returns once done.
    func quiesce() {
        let done = DispatchSemaphore(value: 0)
        guard queue.enqueue(.quiesce(done: done)) else { return }
        done.wait()
    }

    /// A connection of this loop's daemon was resumed: the loop runs the daemon at its next turn
    /// (woken through its pipe when called from another thread, once per burst of resumes).
    func connectionResumed() {
        if queue.loopThread.load(ordering: .relaxed) == UInt(pthread_self()) {
            resumed.store(true, ordering: .relaxed)
        } else if !resumed.exchange(true, ordering: .acquiringAndReleasing) {
            queue.wake.signal()
        }
    }

    /// Stops the thread and waits for it (the daemon itself is the server's to stop).
    func stop() {
        queue.stopAndWait()
    }

    private func run() {
        let sockets = EpollSet(wake: queue.wake, name: "HTTP")
        let daemonFD = chttpdns_mhd_epoll_fd(daemon)
        guard daemonFD >= 0 else { fatalError("HTTP loop: the daemon has no epoll descriptor (MHD_DAEMON_INFO_EPOLL_FD)") }
        sockets.watch(daemonFD, readable: true, writable: false)
        let guest = makeGuest?(sockets)
        OriginLoop.setCurrent(origin)
        var daemonDue = true
        // The daemon's timeout from its last run (ms, -1 for none), and the same as a time on the
        // clock once a turn with the guest's work in flight has read it.
        var daemonTimeout: Int64 = -1
        var daemonDeadline: Int64?
        while true {
            if resumed.load(ordering: .relaxed), resumed.exchange(false, ordering: .acquiringAndReleasing) { daemonDue = true }
            if daemonDue {
                if MHD_run(daemon) != .YES {
                    Self.report(LoopCall.Failure(call: "MHD_run", detail: "libmicrohttpd refused to run the daemon"))
                }
                daemonDue = false
                daemonTimeout = chttpdns_mhd_timeout(daemon)
                daemonDeadline = nil
            }
            let wait: Int32
            let timed: Bool
            if let guest, !guest.isIdle {
                // The guest's work in flight: its deadlines and the daemon's count on the clock,
                // read once a turn.
                let now = MonotonicTime.milliseconds()
                if daemonDeadline == nil, daemonTimeout >= 0 { daemonDeadline = now + daemonTimeout }
                if let deadline = daemonDeadline, deadline <= now { daemonDue = true }
                let next = guest.turn(now: now)
                wait = daemonDue ? 0 : waitMilliseconds(now: now, daemonDeadline, next)
                timed = true
            } else {
                // Nothing of the guest's (every cache hit's turn): no clock. The daemon's timeout
                // counts from its last run, and any turn it did not end runs the daemon next, so
                // the timeout is never carried stale into another wait.
                let pending = daemonDeadline != nil || resumed.load(ordering: .relaxed)
                wait = pending ? 0 : Int32(clamping: daemonTimeout < 0 ? 1000 : min(1000, daemonTimeout))
                timed = false
            }
            var daemonReady = false
            let woken = sockets.wait(milliseconds: wait) { ready in
                // Anything else is the guest's; a descriptor it closed earlier in the same batch
                // is one it no longer knows, and nothing is left to do for it.
                if ready.fd == daemonFD { daemonReady = true } else { _ = guest?.handle(ready) }
            }
            if daemonReady || !timed { daemonDue = true }
            guard woken else { continue }
            queue.wake.drain()
            let (commands, stop) = queue.take()
            perform(commands)
            if stop { break }
        }
        // Jobs still queued run here: what they ask of the guest fails with its shutdown.
        perform(queue.close())
        OriginLoop.setCurrent(nil)
        guest?.shutdown()
        sockets.close()
    }

    private func perform(_ commands: [Command]) {
        for command in commands {
            switch command {
            case .quiesce(let done):
                // Returns the listening socket, which the server closes, or -1 when the daemon was
                // quiesced already: nothing to check.
                _ = MHD_quiesce_daemon(daemon)
                done.signal()
            case .run(let job):
                job()
            }
        }
    }

    /// Until the daemon's timeout or the guest's next turn, at most a second; no wait when a
    /// connection was resumed meanwhile.
    private func waitMilliseconds(now: Int64, _ daemonDeadline: Int64?, _ guestDeadline: Int64?) -> Int32 {
        resumed.load(ordering: .relaxed) ? 0 : MonotonicTime.waitMilliseconds(until: daemonDeadline, guestDeadline, now: now)
    }

    static func report(_ failure: LoopCall.Failure) {
        EventLoopLog.failure(call: failure.call, "HTTP loop: \(failure)")
    }
}
