import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Kills the servers a test process started if that process dies without stopping them.
///
/// Foundation's `Process` cannot set `PR_SET_PDEATHSIG`, so a small `/bin/sh` watchdog polls
/// the test process once a second; when it is gone, the watchdog SIGKILLs every pid still
/// listed in its pid file. Stopped children are removed from the file.
public final class ChildProcessReaper: Sendable {
    /// The one reaper of this test process.
    public static let shared = ChildProcessReaper()

    private struct State {
        var pids: Set<Int32> = []
        var watchdogStarted = false
    }

    private let state = Mutex(State())
    private let pidFile: String

    private init() {
        pidFile = NSTemporaryDirectory() + "httpdnsd-test-children-\(getpid()).pids"
        _ = FileManager.default.createFile(atPath: pidFile, contents: nil)
        atexit {
            ChildProcessReaper.shared.killAll()
        }
    }

    /// Starts tracking `pid` (and the watchdog, on first use).
    func register(_ pid: Int32) {
        let start = state.withLock { state -> Bool in
            state.pids.insert(pid)
            writePidFile(state.pids)
            defer { state.watchdogStarted = true }
            return !state.watchdogStarted
        }
        if start { startWatchdog() }
    }

    /// Stops tracking `pid` (it has exited).
    func unregister(_ pid: Int32) {
        state.withLock { state in
            state.pids.remove(pid)
            writePidFile(state.pids)
        }
    }

    /// SIGKILLs every tracked child (at exit of the test process).
    func killAll() {
        let pids = state.withLock { state in
            defer { state.pids.removeAll() }
            return state.pids
        }
        for pid in pids { _ = kill(pid, SIGKILL) }
        try? FileManager.default.removeItem(atPath: pidFile)
    }

    private func writePidFile(_ pids: Set<Int32>) {
        let text = pids.map(String.init).joined(separator: "\n") + "\n"
        try? text.write(toFile: pidFile, atomically: true, encoding: .utf8)
    }

    private func startWatchdog() {
        let script = """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            if [ -f '\(pidFile)' ]; then for p in $(cat '\(pidFile)'); do kill -9 "$p" 2>/dev/null; done; rm -f '\(pidFile)'; fi
            """
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", script]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try? watchdog.run()
    }
}
