import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A server process started by a test, its stdout and stderr going to `logURL`.
///
/// `stop()` and `kill()` are idempotent and safe from any thread; call one of them in a
/// `defer` on every path. Every child is also registered with `ChildProcessReaper`, which
/// SIGKILLs it if the test process dies without stopping it.
public final class ChildProcess: Sendable {
    /// Short name for messages, e.g. "unbound".
    public let name: String
    /// File receiving the child's stdout and stderr.
    public let logURL: URL
    /// Process id of the child.
    public let pid: Int32

    /// The Foundation process; only used for `isRunning` / `terminationStatus` (both thread-safe).
    private let process: Mutex<Process>
    private let stopped = Mutex(false)

    /// Starts `executable` with exactly `environment` (nothing is inherited).
    public static func launch(
        name: String, executable: String, arguments: [String], environment: [String: String],
        logURL: URL, currentDirectory: URL? = nil
    ) async throws -> ChildProcess {
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        do {
            try process.runWithDefaultSignalMask()
        } catch {
            try? log.close()
            throw HarnessError("could not start \(name) (\(executable)): \(error)")
        }
        try? log.close()
        return ChildProcess(name: name, logURL: logURL, process: process)
    }

    private init(name: String, logURL: URL, process: Process) {
        self.name = name
        self.logURL = logURL
        self.pid = process.processIdentifier
        self.process = Mutex(process)
        ChildProcessReaper.shared.register(pid)
    }

    /// True while the child has not exited.
    public var isRunning: Bool { process.withLock { $0.isRunning } }

    /// The exit code (or the signal number when `exitedBySignal`); nil while running.
    public var terminationStatus: Int32? {
        process.withLock { $0.isRunning ? nil : $0.terminationStatus }
    }

    /// True when the child was ended by a signal rather than exiting.
    public var exitedBySignal: Bool {
        process.withLock { !$0.isRunning && $0.terminationReason == .uncaughtSignal }
    }

    /// What the child has written to stdout/stderr so far.
    public func output() -> String {
        (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
    }

    /// Waits up to `timeout` seconds for the child to exit; returns whether it did.
    /// Polls with `Task.sleep`, so it never blocks a cooperative thread.
    @discardableResult
    public func waitForExit(timeout: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning {
            if Date() >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Sends `signal` (once per call) without waiting.
    public func send(signal: Int32) {
        if isRunning { _ = Glibc.kill(pid, signal) }
    }

    /// SIGTERM, then SIGKILL after `timeout` seconds; returns the exit status. Idempotent.
    @discardableResult
    public func stop(timeout: Double = 10) async -> Int32? {
        let first = stopped.withLock { wasStopped in
            defer { wasStopped = true }
            return !wasStopped
        }
        if first, isRunning {
            send(signal: SIGTERM)
            if await !waitForExit(timeout: timeout) {
                send(signal: SIGKILL)
                await waitForExit(timeout: 5)
            }
        } else {
            await waitForExit(timeout: timeout)
        }
        ChildProcessReaper.shared.unregister(pid)
        return terminationStatus
    }

    /// SIGKILL at once and wait for the child to be gone. Idempotent.
    public func kill() async {
        stopped.withLock { $0 = true }
        send(signal: SIGKILL)
        await waitForExit(timeout: 10)
        ChildProcessReaper.shared.unregister(pid)
    }

    deinit {
        if process.withLock({ $0.isRunning }) {
            _ = Glibc.kill(pid, SIGKILL)
        }
    }
}
