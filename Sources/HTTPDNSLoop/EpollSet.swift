import CEpoll

#if canImport(Glibc)
    import Glibc
#endif

/// One epoll set of an event-loop thread: its wake-up pipe plus the sockets a C library asks to
/// watch (curl through its socket callback, hiredis through its `ev` hooks). Confined to the loop
/// thread that created it.
package final class EpollSet {
    /// What a ready descriptor can do.
    package struct Readiness {
        package var fd: Int32
        package var readable: Bool
        package var writable: Bool
        /// `EPOLLERR` or `EPOLLHUP`.
        package var failed: Bool

        package init(fd: Int32, readable: Bool, writable: Bool, failed: Bool) {
            self.fd = fd
            self.readable = readable
            self.writable = writable
            self.failed = failed
        }
    }

    private let epollFD: Int32
    private let wakeDescriptor: Int32
    /// Where failures the loop survives go (`wake`'s services).
    private let report: @Sendable (LoopCall.Failure) -> Void
    /// Sockets in the set (a closed socket leaves the set by itself; its number may come back
    /// for a new socket, which `watch` handles).
    private var watched: Set<Int32> = []
    /// Used by `wait` alone, on the loop thread (`ready` never waits again): without the runtime's
    /// exclusivity check on every wait.
    @exclusivity(unchecked) private var events = [epoll_event](repeating: epoll_event(), count: 256)

    /// Creates the set and watches `wake`'s read end. Without them the loop cannot run at all: a
    /// failure stops the process with the call named.
    package init(wake: WakePipe, name: String) {
        wakeDescriptor = wake.readDescriptor
        report = wake.services.report
        do throws(LoopCall.Failure) {
            epollFD = try LoopCall.system("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.fd = wakeDescriptor
            try LoopCall.system("epoll_ctl(ADD, wake pipe)") { [epollFD] in epoll_ctl(epollFD, EPOLL_CTL_ADD, event.data.fd, &event) }
        } catch {
            fatalError("\(name) event loop: \(error)")
        }
    }

    /// Watches `fd` for reading and/or writing (both false: stops watching it). A failure is
    /// reported and the socket is not watched: its work ends by its timeout rather than hang.
    package func watch(_ fd: Int32, readable: Bool, writable: Bool) {
        let epollFD = epollFD
        guard readable || writable else {
            guard watched.remove(fd) != nil else { return }
            do throws(LoopCall.Failure) {
                try LoopCall.system("epoll_ctl(DEL)") { epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil) }
            } catch  where error.errorNumber == EBADF || error.errorNumber == ENOENT {
                // The socket was closed before it was removed: closing took it out of the set.
            } catch {
                report(error)
            }
            return
        }
        var event = epoll_event()
        event.events = (readable ? EPOLLIN.rawValue : 0) | (writable ? EPOLLOUT.rawValue : 0)
        event.data.fd = fd
        // A number in `watched` may belong to a socket closed without a removal (it left the set
        // when it closed); a number not in it may still be in the set: on ENOENT or EEXIST, the
        // other operation is the right one.
        let first = watched.contains(fd) ? EPOLL_CTL_MOD : EPOLL_CTL_ADD
        do throws(LoopCall.Failure) {
            do throws(LoopCall.Failure) {
                try LoopCall.system("epoll_ctl") { epoll_ctl(epollFD, first, fd, &event) }
            } catch  where error.errorNumber == ENOENT || error.errorNumber == EEXIST {
                let other = first == EPOLL_CTL_MOD ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
                try LoopCall.system("epoll_ctl") { epoll_ctl(epollFD, other, fd, &event) }
            }
            watched.insert(fd)
        } catch {
            report(error)
        }
    }

    /// Waits up to `milliseconds` (-1: no limit) and calls `ready` for each socket that is ready
    /// (on this thread, before returning; no allocation). Returns whether the wake-up pipe fired
    /// (the caller drains it). A broken set (EBADF, EINVAL) is reported and counts as an empty wait.
    package func wait(milliseconds: Int32, _ ready: (Readiness) -> Void) -> Bool {
        let epollFD = epollFD
        let count: Int32
        do throws(LoopCall.Failure) {
            count = try events.withUnsafeMutableBufferPointer { (buffer) throws(LoopCall.Failure) -> Int32 in
                try LoopCall.system("epoll_wait") { epoll_wait(epollFD, buffer.baseAddress, Int32(buffer.count), milliseconds) }
            }
        } catch {
            report(error)
            return false
        }
        var woken = false
        for index in 0..<Int(max(0, count)) {
            let fd = events[index].data.fd
            if fd == wakeDescriptor {
                woken = true
                continue
            }
            let bits = events[index].events
            ready(
                Readiness(
                    fd: fd, readable: bits & EPOLLIN.rawValue != 0, writable: bits & EPOLLOUT.rawValue != 0,
                    failed: bits & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0))
        }
        return woken
    }

    /// Closes the set (the loop is ending).
    package func close() {
        do throws(LoopCall.Failure) {
            try LoopCall.system("close(epoll)") { [epollFD] in Glibc.close(epollFD) }
        } catch {
            report(error)
        }
    }
}

@available(*, unavailable)
extension EpollSet: Sendable {}
