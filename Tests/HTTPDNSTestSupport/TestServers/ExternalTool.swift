import Foundation

/// Runs a command-line tool (openssl, curl, python3) to completion with a bound on its run time.
public enum ExternalTool {
    /// Runs `name` (found in PATH) with `arguments`; returns its exit status and its stdout and
    /// stderr together. Killed, and a `HarnessError` thrown, after `timeout` seconds.
    public static func run(
        _ name: String, _ arguments: [String], timeout: Double = 30,
        environment: [String: String] = [:], in directory: URL? = nil
    ) async throws -> (status: Int32, output: String) {
        let executable = try TestPaths.executable(name)
        let logDirectory = try directory ?? TestPaths.makeTemporaryDirectory(name)
        let process = try await ChildProcess.launch(
            name: name, executable: executable, arguments: arguments,
            environment: TestPaths.childEnvironment(environment),
            logURL: logDirectory.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8)).log"),
            currentDirectory: directory)
        guard await process.waitForExit(timeout: timeout) else {
            await process.kill()
            throw HarnessError("\(name) \(arguments) did not finish within \(timeout) s: \(process.output())")
        }
        return (process.terminationStatus ?? -1, process.output())
    }
}
