import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real `redis-server` on 127.0.0.1 and a free port, with its own directory, no persistence
/// (`--save '' --appendonly no`), optionally a `requirepass`. Failure tests stop it (SIGSTOP),
/// kill it, and start it again, empty, on the same port. Killed when the test stops it.
public final class RedisServerProcess: Sendable {
    public let port: UInt16
    public let directory: URL
    public let password: String?
    private let process: Mutex<ChildProcess?>

    /// `redis://[:password@]127.0.0.1:PORT`, the form `HTTPDNS_REDIS` takes.
    public var url: String { "redis://\(password.map { ":\($0)@" } ?? "")127.0.0.1:\(port)" }

    private init(port: UInt16, directory: URL, password: String?, process: ChildProcess) {
        self.port = port
        self.directory = directory
        self.password = password
        self.process = Mutex(process)
    }

    /// Starts `redis-server` and waits until it answers `PING`.
    public static func start(password: String? = nil) async throws -> RedisServerProcess {
        try await startRetrying(
            "redis-server",
            launch: {
                let directory = try TestPaths.makeTemporaryDirectory("redis")
                let port = freePort()
                let process = try await launch(port: port, directory: directory, password: password)
                return RedisServerProcess(port: port, directory: directory, password: password, process: process)
            },
            ready: { try await $0.waitUntilAnswering() },
            stop: { await $0.stop() })
    }

    private static func launch(port: UInt16, directory: URL, password: String?) async throws -> ChildProcess {
        var arguments = [
            "--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no", "--dir", directory.path,
            "--daemonize", "no", "--protected-mode", "no", "--loglevel", "notice", "--databases", "16",
        ]
        if let password { arguments += ["--requirepass", password] }
        return try await ChildProcess.launch(
            name: "redis-server", executable: try TestPaths.executable("redis-server"), arguments: arguments,
            environment: TestPaths.childEnvironment(), logURL: directory.appendingPathComponent("redis-\(UUID().uuidString.prefix(8)).log"))
    }

    /// True while the server process runs (a paused one runs).
    public var isRunning: Bool { process.withLock { $0?.isRunning ?? false } }

    /// SIGSTOP: the server keeps its connections and port but answers nothing.
    public func pause() {
        process.withLock { $0?.send(signal: SIGSTOP) }
    }

    /// SIGCONT after `pause()`.
    public func resume() {
        process.withLock { $0?.send(signal: SIGCONT) }
    }

    /// SIGKILL (connections reset); `restart()` brings a new, empty server on the same port.
    public func kill() async {
        let current = process.withLock { $0 }
        current?.send(signal: SIGCONT)
        await current?.kill()
    }

    /// Kills the server if it runs and starts a new, empty one on the same port.
    public func restart() async throws {
        await kill()
        var lastError: Error = HarnessError("redis-server did not restart")
        // The port may linger a moment after the kill: a few tries. A server that cannot bind
        // exits and fails the wait at once; one that runs gets 10 s to answer (3 s was not enough
        // for a start and a redis-cli per probe on a loaded machine, and killed a healthy server).
        for _ in 0..<20 {
            let fresh = try await Self.launch(port: port, directory: directory, password: password)
            process.withLock { $0 = fresh }
            do {
                try await waitUntilAnswering(seconds: 10)
                return
            } catch {
                lastError = error
                await fresh.kill()
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        throw lastError
    }

    /// Stops the server (resuming it first if paused). Idempotent.
    public func stop() async {
        let current = process.withLock { $0 }
        current?.send(signal: SIGCONT)
        await current?.stop(timeout: 5)
    }

    /// The server's log so far.
    public func log() -> String { process.withLock { $0?.output() ?? "" } }

    /// Runs one command with `redis-cli` and returns its raw output (`--no-raw` off: plain values,
    /// one a line), or throws when redis-cli fails.
    @discardableResult
    public func cli(_ arguments: [String]) throws -> String {
        var full = ["-h", "127.0.0.1", "-p", String(port)]
        if let password { full += ["-a", password, "--no-auth-warning"] }
        let run = try CommandRun.run(try TestPaths.executable("redis-cli"), full + arguments)
        guard run.status == 0 else { throw HarnessError("redis-cli \(arguments) failed: \(run.text)") }
        return run.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Waits until the server answers `PING` with `PONG`.
    public func waitUntilAnswering(seconds: Double = 10) async throws {
        let answering = try await Poll.until(limit: seconds) {
            guard isRunning else { throw HarnessError("redis-server exited: \(log())") }
            return (try? cli(["PING"])) == "PONG"
        }
        if answering { return }
        throw HarnessError("redis-server did not answer PING on port \(port) within \(seconds) s: \(log())")
    }
}
