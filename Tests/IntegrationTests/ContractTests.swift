import Foundation
import HTTPDNSTestSupport
import Testing

/// `openapi.yaml` holds for the real binary: schemathesis (fixed seed, bounded examples, every
/// phase including the stateful one) checks each answer against the spec, with the admin token,
/// in a network namespace that has nothing but loopback (scripts/test/contract.sh).
@Suite("Contract")
struct ContractTests {
    @Test func schemathesisFindsNoDepartureFromTheSpec() async throws {
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/contract.sh").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        process.arguments = [TestPaths.httpdnsdBinary, "8"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read before waiting: the run prints more than a pipe holds.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0, "contract.sh failed:\n\(text.suffix(12_000))")
        #expect(text.contains("No issues found"), "\(text.suffix(4000))")
    }
}
