#if canImport(Glibc)
    import Glibc
#endif

/// A non-blocking pipe used to wake a `poll(2)` loop from other threads. The descriptors stay
/// open for the life of the object. System call results go through `LoopCall`; the failures a
/// loop survives go to `services`.
package final class WakePipe: Sendable {
    package let readDescriptor: Int32
    package let writeDescriptor: Int32
    /// The loop's thread naming and failure log, shared with the `EpollSet` that watches the pipe.
    package let services: LoopServices

    /// Creates the pipe; without it no loop can run, so a failure stops the process naming the call.
    package init(services: LoopServices) {
        self.services = services
        var fds: [Int32] = [-1, -1]
        do throws(LoopCall.Failure) {
            try LoopCall.system("pipe") { pipe(&fds) }
            for fd in fds {
                try LoopCall.makeNonBlocking(fd)
                try LoopCall.system("fcntl(F_SETFD, FD_CLOEXEC)") { fcntl(fd, F_SETFD, FD_CLOEXEC) }
            }
        } catch {
            fatalError("wake pipe: \(error)")
        }
        readDescriptor = fds[0]
        writeDescriptor = fds[1]
    }

    deinit {
        for fd in [readDescriptor, writeDescriptor] {
            do throws(LoopCall.Failure) {
                try LoopCall.system("close(wake pipe)") { close(fd) }
            } catch {
                services.report(error)
            }
        }
    }

    /// Wakes the reader (a full pipe, EAGAIN, already means a wake-up is pending).
    package func signal() {
        var byte: UInt8 = 1
        do throws(LoopCall.Failure) {
            try LoopCall.system("write(wake pipe)") { write(writeDescriptor, &byte, 1) }
        } catch  where error.errorNumber == EAGAIN {
            // A wake-up is pending already.
        } catch {
            services.report(error)
        }
    }

    /// Empties the pipe after a wake-up. A read that returns less than it asked for has emptied
    /// it (a byte written meanwhile is a new wake-up, which the next wait reports), so one read is
    /// the usual cost; a buffer on the stack, not the heap.
    package func drain() {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            do throws(LoopCall.Failure) {
                while try LoopCall.system("read(wake pipe)", { read(readDescriptor, buffer.baseAddress, buffer.count) }) == buffer.count {}
            } catch  where error.errorNumber == EAGAIN {
                // Empty.
            } catch {
                services.report(error)
            }
        }
    }
}
