import Foundation
import HTTPDNSTestSupport
import Testing

/// `openapi.yaml` is valid OpenAPI 3.1 and holds for the real binary: schemathesis (a new seed
/// each run, printed, bounded examples, every phase including the stateful one, every check
/// including `not_a_server_error`) checks each answer against the spec, with the admin token and
/// live loopback upstreams, in a network namespace that has nothing but loopback
/// (scripts/test/contract.sh; `CONTRACT_SEED=<seed>` replays a run).
@Suite("Contract")
struct ContractTests {
    static var spec: String { TestPaths.packageRoot.appendingPathComponent("openapi.yaml").path }

    @Test func theSpecIsValidOpenAPI() throws {
        let run = try CommandRun.run("openapi-spec-validator", [Self.spec])
        #expect(run.status == 0, "\(run.text.suffix(4000))")
    }

    @Test func schemathesisFindsNoDepartureFromTheSpec() async throws {
        let script = TestPaths.packageRoot.appendingPathComponent("scripts/test/contract.sh").path
        let run = try CommandRun.run(script, [TestPaths.httpdnsdBinary, "8"])
        let text = run.text
        #expect(run.status == 0, "contract.sh failed:\n\(text.suffix(12_000))")
        #expect(text.contains("No issues found"), "\(text.suffix(4000))")
    }
}
