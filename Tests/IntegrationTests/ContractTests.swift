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
        let run = try CommandRun.run(script, [TestPaths.httpdnsdBinary, "8"])
        let text = run.text
        #expect(run.status == 0, "contract.sh failed:\n\(text.suffix(12_000))")
        #expect(text.contains("No issues found"), "\(text.suffix(4000))")
    }
}
