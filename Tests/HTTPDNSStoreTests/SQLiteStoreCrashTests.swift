import Foundation
import HTTPDNSCore
import HTTPDNSStore
import Testing

/// Crash durability with a real crash: the test binary re-runs itself as a child that writes
/// through `SQLiteStore` and then kills itself with SIGKILL (no close, no atexit); the parent
/// then reads the file with an independent connection.
@Suite struct SQLiteStoreCrashTests {
    private static let childEnvironmentKey = "HTTPDNS_STORE_CRASH_CHILD_DB"
    private static let testBinary = CommandLine.arguments.first ?? ""

    /// The child's half; does nothing unless started by `committedWritesSurviveAKilledProcess`.
    @Test func crashChildWritesThenKillsItself() async throws {
        guard let path = ProcessInfo.processInfo.environment[Self.childEnvironmentKey] else { return }
        let store = try SQLiteStore(path: path, flushInterval: 3_600)
        try await store.saveAccount(id: "runtime", json: #"{"id":"runtime"}"#)
        store.upsert(account: "acct", key: Sample.key("flushed.example"), entry: Sample.entry(["192.0.2.1"]))
        await store.flushed()
        store.upsert(account: "acct", key: Sample.key("queued.example"), entry: Sample.entry(["192.0.2.2"]))
        kill(getpid(), SIGKILL)
    }

    @Test(.enabled(if: testBinary.hasSuffix(".xctest"), "needs the test binary to re-run as the child"))
    func committedWritesSurviveAKilledProcess() async throws {
        try await TemporaryDatabase.with { database in
            let child = Process()
            child.executableURL = URL(fileURLWithPath: Self.testBinary)
            child.arguments = ["--testing-library", "swift-testing", "--filter", "crashChildWritesThenKillsItself"]
            var environment = ProcessInfo.processInfo.environment
            environment[Self.childEnvironmentKey] = database.path
            child.environment = environment
            child.standardOutput = FileHandle.nullDevice
            child.standardError = FileHandle.nullDevice
            try child.run()
            child.waitUntilExit()
            #expect(child.terminationReason == .uncaughtSignal)
            #expect(child.terminationStatus == SIGKILL)

            let reader = try IndependentConnection(path: database.path)
            #expect(try reader.rows("SELECT id, json, deleted FROM accounts") == [["runtime", #"{"id":"runtime"}"#, "0"]])
            // The flushed entry survived; the one only queued in memory was lost, as designed.
            #expect(try reader.rows("SELECT host FROM cache_entries") == [["flushed.example"]])
        }
    }
}
