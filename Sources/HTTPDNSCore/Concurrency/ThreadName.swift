#if canImport(Glibc)
    import Glibc
#endif

/// The system's name of a thread the service starts (`/proc/PID/task/TID/comm`, `top -H`, gdb):
/// set by the thread itself, first thing in its body. Foundation's `Thread.name` cannot be used
/// for it on Linux: it reaches the system only on a `Thread` whose `start()` has returned, so a
/// name set before `start` is lost, and so is one the new thread sets itself whenever it runs
/// before `start()` has returned in the thread that started it (as on a loaded machine).
public enum ThreadName {
    /// Linux's limit, the terminating NUL excluded.
    public static let maximumLength = 15

    /// Names the calling thread `name`, cut to `maximumLength` bytes. Written to
    /// `/proc/thread-self/comm` (what `pthread_setname_np` does, which Glibc's Swift module
    /// does not declare); a failure is logged: the thread works as well without a name.
    public static func setCurrent(_ name: String) {
        let bytes = Array(name.utf8.prefix(maximumLength))
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        let written = descriptor < 0 ? -1 : write(descriptor, bytes, bytes.count)
        let code = errno
        if descriptor >= 0 { close(descriptor) }
        if written != bytes.count {
            Log.warning("could not name thread '\(name)': \(String(cString: strerror(code)))")
        }
    }
}
