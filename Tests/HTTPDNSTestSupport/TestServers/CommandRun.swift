import Foundation

/// A command run to its end with its output captured: the one way tests run python3, curl,
/// validators and scripts (servers that keep running are `ChildProcess`). The output is read
/// before the exit is awaited (a child that prints more than a pipe holds would otherwise never
/// exit).
public struct CommandRun: Sendable {
    /// The exit status.
    public let status: Int32
    /// Standard output, followed by standard error when they were merged.
    public let output: Data

    /// The output as UTF-8 text.
    public var text: String { String(decoding: output, as: UTF8.self) }

    /// Runs `executable` (an absolute path, or a name looked up on `PATH` through
    /// `/usr/bin/env`) with `arguments`, standard input empty. `mergingStandardError`: standard
    /// error goes into `output` too; otherwise it is left to the test process's own.
    public static func run(_ executable: String, _ arguments: [String], mergingStandardError: Bool = true) throws -> CommandRun {
        let process = Process()
        if executable.hasPrefix("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        if mergingStandardError { process.standardError = pipe }
        process.standardInput = FileHandle.nullDevice
        try process.runWithDefaultSignalMask()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandRun(status: process.terminationStatus, output: output)
    }
}
